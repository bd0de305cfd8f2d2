package client

import (
	"syscall"
)

// While a batch is held the reader leaves the socket alone, but the kernel
// still woke the Go poller for each frame that arrived meanwhile (the
// socket is registered edge-triggered: every arrival is an edge), and
// nobody was waiting for it: in a steady stream of 200 messages a second
// that was a thread wake-up (a context switch and two epoll calls) a
// message, most of the scheduler's share of a message's CPU. During the
// pause the socket's receive low-water mark (SO_RCVLOWAT) is raised, so the
// kernel reports the socket readable only once that much is waiting, and
// put back to one byte before the reader reads again.

// pauseLowWater is the low-water mark during a pause: far more than a held
// stream brings in one hold (a few hundred bytes a message), so it wakes
// nobody, yet a burst that brings more is still reported.
const pauseLowWater = 16 << 10

// lowWaterSetter returns what raises (held) and lowers the socket's
// receive low-water mark, or nil when the socket's buffer cannot be read.
// The mark stays at most a quarter of the receive buffer: Linux grows the
// buffer, and clamps the TCP window to the mark for good, when the mark
// needs more room than the buffer has.
func lowWaterSetter(raw syscall.RawConn) func(held bool) error {
	mark := 0
	if err := raw.Control(func(fd uintptr) {
		if buf, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF); err == nil {
			mark = min(pauseLowWater, buf/4)
		}
	}); err != nil || mark <= 1 {
		return nil
	}
	return func(held bool) error {
		v := 1
		if held {
			v = mark
		}
		var serr error
		if err := raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, v)
		}); err != nil {
			return err
		}
		return serr
	}
}
