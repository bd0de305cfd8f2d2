// Package prefault asks the kernel for a range of memory's pages in one
// call, before the program writes them.
//
// The chat TUI's start writes about 2,000 pages of fresh memory before its
// first frame (go-runewidth's width table, the Go heap of Bubble Tea's
// screen buffers and the package initialisers), and every first write of a
// page is a page fault: a trap into the kernel, which on a virtual machine
// costs 15–150 µs. MADV_POPULATE_WRITE (Linux 5.14 on) makes the same pages
// present and writable in one system call, without a trap per page: 550
// pages of a program's bss took 15–25 ms to write one page fault at a time
// and 0.5–1.4 ms populated first (then 6–8 ms to write, the same loop),
// at load 4 (docs/tui.md "Time to a painted inbox").
//
// Populating is advice: where the kernel does not have it (an older Linux,
// another system) nothing happens and the pages fault as before, so callers
// may drop the error.
package prefault

import (
	"fmt"
	"unsafe"
)

// pageSize is the page the kernel populates by. Only whole pages inside a
// range are populated: a page shared with other data is left to fault.
const pageSize = 4096

// Populate makes every whole page of b present and writable, in one call
// where the system allows it.
func Populate(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return populateRange(p, p+uintptr(len(b)))
}

// populateRange populates the whole pages between the addresses from and
// to.
func populateRange(from, to uintptr) error {
	start := (from + pageSize - 1) &^ (pageSize - 1)
	end := to &^ (pageSize - 1)
	if end <= start {
		return nil
	}
	if err := populate(start, end-start); err != nil {
		return fmt.Errorf("populate %d pages at %#x: %w", (end-start)/pageSize, start, err)
	}
	return nil
}
