package heapwarm

import (
	"testing"
	"time"

	"github.com/chatterm/chat/internal/prefault/faulttest"
)

// Once Start has run, the start's next MB of heap objects is written
// without a page fault a page. In a process of its own, the collector off, as
// the TUI's start holds it.
func TestStartPopulatesTheHeap(t *testing.T) {
	faulttest.InFreshProcess(t, []string{"GOGC=off"}, func(t *testing.T) {
		faulttest.RequirePopulate(t)
		faulttest.SkipUnderHugePages(t)
		// Start populates only what the runtime has mapped of the heap.
		faulttest.GrowHeap(t, 2<<20)
		Start()
		Start() // once
		select {
		case <-Done():
		case <-time.After(time.Minute):
			t.Fatal("the heap was not populated within a minute")
		}
		c := faulttest.NewCounter(t)
		faulttest.Allocate(1 << 20)
		// 256 pages; a few may come from a processor's cache of pages
		// below the populated ones.
		if n := c.Faults(t); n > 128 {
			t.Errorf("1 MiB of new objects (256 pages) after Start took %d page faults", n)
		}
	})
}
