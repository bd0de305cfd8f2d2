//go:build linux

package prefault_test

import (
	"syscall"
	"testing"

	"github.com/chatterm/chat/internal/prefault"
	"github.com/chatterm/chat/internal/prefault/faulttest"
)

// fresh is memory no test has written: a mapping of its own.
func fresh(t *testing.T, n int) []byte {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	return b
}

func writePages(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
}

// Writing fresh pages traps once a page; written after Populate, they are
// already there.
func TestPopulatedPagesTakeNoFaults(t *testing.T) {
	const pages = 256
	c := faulttest.NewCounter(t)
	cold := fresh(t, pages*4096)
	before := c.Faults(t)
	writePages(cold)
	if n := c.Faults(t) - before; n < pages/2 {
		t.Fatalf("writing %d fresh pages took %d faults: the counter does not count them", pages, n)
	}

	warm := fresh(t, pages*4096)
	if err := prefault.Populate(warm); err != nil {
		t.Skipf("this kernel does not populate: %v", err)
	}
	before = c.Faults(t)
	writePages(warm)
	if n := c.Faults(t) - before; n > pages/10 {
		t.Errorf("writing %d populated pages took %d faults", pages, n)
	}
}

// Only whole pages inside the slice are populated: the pages it shares with
// memory around it are not the caller's to touch.
func TestPopulateLeavesPartPagesAlone(t *testing.T) {
	c := faulttest.NewCounter(t)
	// A fault the thread takes for something else (a signal handled on it
	// on a loaded machine) only adds to a count: one clean round of a few
	// decides, each on fresh pages.
	var parts, wholes int
	for range 5 {
		b := fresh(t, 4*4096)
		if err := prefault.Populate(b[100 : 3*4096+100]); err != nil {
			t.Skipf("this kernel does not populate: %v", err)
		}
		before := c.Faults(t)
		b[0] = 1 // the first page, shared with b[:100]
		b[3*4096] = 1
		parts = c.Faults(t) - before
		before = c.Faults(t)
		b[4096], b[2*4096] = 1, 1
		wholes = c.Faults(t) - before
		if parts == 2 && wholes == 0 {
			return
		}
	}
	t.Errorf("in every round the two part pages took %d faults (the last round), want 2 (populated though not whole), and the two whole pages %d after Populate, want 0", parts, wholes)
}
