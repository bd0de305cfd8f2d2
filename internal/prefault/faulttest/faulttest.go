// Package faulttest counts the page faults a thread takes as traps, for
// tests of code that populates pages ahead of their use.
//
// The process's minor fault count (getrusage) cannot tell the two apart:
// a page populated by madvise counts there as a fault too, though no trap
// is taken. The kernel's software event for page faults counts only the
// traps (a populate has no user registers to report), and only those of the
// thread that opened it.
package faulttest

// Counter counts the page faults the calling thread takes as traps from
// the moment it is opened. NewCounter locks the calling goroutine to its
// thread until the test ends, so that what the test does next is counted.
// Only Linux has one: elsewhere NewCounter skips the test.
type Counter struct{ fd int }
