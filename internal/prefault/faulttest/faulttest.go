// Package faulttest counts the page faults a thread takes as traps, for
// tests of code that populates pages ahead of their use.
//
// The process's minor fault count (getrusage) cannot tell the two apart:
// a page populated by madvise counts there as a fault too, though no trap
// is taken. The kernel's software event for page faults counts only the
// traps (a populate has no user registers to report), and only those of the
// thread that opened it.
package faulttest

import (
	"os"
	"strings"
	"testing"

	"github.com/chatterm/chat/internal/prefault"
)

// Counter counts the page faults the calling thread takes as traps from
// the moment it is opened. NewCounter locks the calling goroutine to its
// thread until the test ends, so that what the test does next is counted.
// Only Linux has one: elsewhere NewCounter skips the test.
type Counter struct{ fd int }

// RequirePopulate skips t where the kernel cannot populate pages (Linux
// before 5.14, gVisor, a seccomp profile without MADV_POPULATE_WRITE): the
// code under test then leaves its pages to fault, as it is meant to, and
// counting them would only say so.
func RequirePopulate(t testing.TB) {
	t.Helper()
	if err := prefault.Populate(make([]byte, 3*4096)); err != nil {
		t.Skipf("this kernel does not populate pages: %v", err)
	}
}

// SkipUnderHugePages skips t where transparent huge pages are always on:
// the Go heap may then fault in 2 MiB at a time, and a count of 4 KiB
// page faults says nothing.
func SkipUnderHugePages(t testing.TB) {
	t.Helper()
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil && strings.Contains(string(b), "[always]") {
		t.Skip("transparent huge pages are always on: the heap faults in huge pages")
	}
}
