//go:build unix

package client

import (
	"errors"
	"io"
	"syscall"
)

const nonBlockingReads = true

// tryRead reads what the socket holds now, without waiting; done is false
// when it holds nothing (the caller then waits in an ordinary read).
func tryRead(raw syscall.RawConn, p []byte) (n int, done bool, err error) {
	if len(p) == 0 {
		return 0, false, nil
	}
	var rerr error
	if cerr := raw.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), p)
		return true // never wait here
	}); cerr != nil {
		return 0, false, nil // closed or past a deadline: the ordinary read says which
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
		return 0, false, nil
	case rerr != nil:
		return 0, false, nil // the ordinary read reports it, as net.Conn errors are
	case n == 0:
		return 0, true, io.EOF
	}
	return n, true, nil
}
