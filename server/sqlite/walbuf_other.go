//go:build !linux

package sqlite

// walbuf_linux.c is built and tried on Linux only; elsewhere the writer uses
// SQLite's default VFS, and its WAL frames go out with two writes each.
const walBufVFS = ""

func registerWALBuf() error { return nil }
