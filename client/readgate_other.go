//go:build !unix

package client

import "syscall"

// Without the non-blocking read below, a hold waits on its timer alone.
const nonBlockingReads = false

func tryRead(syscall.RawConn, []byte) (int, bool, error) { return 0, false, nil }
