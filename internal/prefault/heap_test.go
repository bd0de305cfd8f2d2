package prefault_test

import (
	"testing"

	"github.com/chatterm/chat/internal/prefault"
	"github.com/chatterm/chat/internal/prefault/faulttest"
)

// After HeapAhead, the heap's next allocations are carved from pages that
// are already there. It runs in a process of its own with the collector
// off, so that the heap only grows, as it does during the TUI's start.
func TestHeapAheadPopulatesTheNextAllocations(t *testing.T) {
	faulttest.InFreshProcess(t, []string{"GOGC=off"}, func(t *testing.T) {
		faulttest.SkipUnderHugePages(t)
		// HeapAhead populates only what the runtime has mapped.
		faulttest.GrowHeap(t, 2<<20)
		c := faulttest.NewCounter(t)
		if err := prefault.HeapAhead(4 << 20); err != nil {
			t.Skipf("the heap was not populated: %v", err)
		}
		before := c.Faults(t)
		faulttest.Allocate(1 << 20)
		if n := c.Faults(t) - before; n > 128 {
			t.Errorf("1 MiB of new objects (256 pages) after HeapAhead(4 MiB) took %d page faults", n)
		}
		before = c.Faults(t)
		faulttest.Allocate(8 << 20)
		if n := c.Faults(t) - before; n < 256 {
			t.Errorf("8 MiB of new objects past what HeapAhead populated took %d page faults: the counter does not count them", n)
		}
	})
}
