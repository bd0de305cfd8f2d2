package prefault

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

// heapMark is allocated by HeapAhead to learn where the Go heap grows next:
// an object this large has pages of its own, taken from the lowest free
// ones (a small one shares a span that may be anywhere below).
var heapMark *[64 << 10]byte

// HeapAhead populates up to n bytes of the Go heap past its newest
// allocation, as far as the runtime has mapped it (read from
// /proc/self/maps): the memory the next allocations will be carved from,
// since the runtime hands out the lowest free pages first. The runtime maps
// its heap 4 MiB or more at a time, as it grows, so how much that is depends
// on where the newest allocation lies in its mapping: anything from nothing
// to n. (Allocating and freeing n bytes first would make the runtime map
// them, at the cost of a collection; on the TUI's start it left more faults
// than this, docs/tui.md.) Pages the program never comes to use cost their
// zeroing and stay in its resident set until the runtime gives them back.
func HeapAhead(n int) error {
	heapMark = new([64 << 10]byte)
	at := uintptr(unsafe.Pointer(heapMark))
	end, err := mappingEnd(at)
	if err != nil {
		return err
	}
	return populateRange(at, min(end, at+uintptr(n)))
}

// MappedAfter is how many bytes of writable mapping lie past p, in the
// mapping that holds it: for a heap object, as far as HeapAhead can
// populate. The runtime extends the heap's mapping 4 MiB or more at a time.
func MappedAfter(p unsafe.Pointer) (uintptr, error) {
	end, err := mappingEnd(uintptr(p))
	if err != nil {
		return 0, err
	}
	return end - uintptr(p), nil
}

// mappingEnd is the end of the writable mapping that holds the address at.
func mappingEnd(at uintptr) (uintptr, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("the heap's mapping: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "7e837400000-7e837c00000 rw-p 00000000 00:00 0"
		span, rest, _ := bytes.Cut(sc.Bytes(), []byte(" "))
		lo, hi, ok := bytes.Cut(span, []byte("-"))
		if !ok || !bytes.HasPrefix(rest, []byte("rw")) {
			continue
		}
		l, err1 := strconv.ParseUint(string(lo), 16, 64)
		h, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 == nil && err2 == nil && uintptr(l) <= at && at < uintptr(h) {
			return uintptr(h), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("the heap's mapping: %w", err)
	}
	return 0, fmt.Errorf("the heap's mapping: no writable mapping holds %#x", at)
}
