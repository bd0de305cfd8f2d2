package faulttest

import (
	"testing"
	"unsafe"

	"github.com/chatterm/chat/internal/prefault"
)

var kept [][]byte

// Allocate makes n bytes of new heap objects, 64 KiB each, writes every page
// of them, as a program's first allocations do, keeps them, and returns the
// last.
func Allocate(n int) (last []byte) {
	for ; n > 0; n -= 64 << 10 {
		last = make([]byte, 64<<10)
		for i := 0; i < len(last); i += 4096 {
			last[i] = 1
		}
		kept = append(kept, last)
	}
	return last
}

// GrowHeap allocates until the heap's newest object has at least min bytes
// of mapping after it, so that what prefault.HeapAhead populates next does
// not depend on how far the runtime had mapped the heap before the test.
func GrowHeap(t testing.TB, min uintptr) {
	t.Helper()
	for i := 0; ; i++ {
		after, err := prefault.MappedAfter(unsafe.Pointer(unsafe.SliceData(Allocate(64 << 10))))
		if err != nil {
			t.Skipf("the heap's mapping: %v", err)
		}
		if after >= min {
			return
		}
		if i > 1000 {
			t.Fatalf("64 MiB allocated and the heap's newest object never had %d bytes of mapping after it", min)
		}
	}
}
