package faulttest

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NewCounter opens a counter on the calling thread, or skips the test when
// the kernel does not allow one (perf_event_paranoid above 2, a seccomp
// filter) or the race detector is on.
func NewCounter(t testing.TB) *Counter {
	t.Helper()
	if raceDetector {
		t.Skip("under the race detector every page written faults its shadow memory in too")
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_PAGE_FAULTS,
		Bits:   unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		t.Skipf("no page-fault counter for this thread (perf_event_open: %v)", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &Counter{fd: fd}
}

// Faults is how many page faults the thread has taken as traps since the
// counter was opened.
func (c *Counter) Faults(t testing.TB) int {
	t.Helper()
	var b [8]byte
	if _, err := unix.Read(c.fd, b[:]); err != nil {
		t.Fatal(fmt.Errorf("read the page-fault counter: %w", err))
	}
	return int(binary.NativeEndian.Uint64(b[:]))
}
