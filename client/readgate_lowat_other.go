//go:build !linux

package client

import "syscall"

// Elsewhere a pause leaves the socket's low-water mark alone: BSD's kqueue
// and Windows treat it otherwise, and the hold works without it.
func lowWaterSetter(syscall.RawConn) func(held bool) error { return nil }
