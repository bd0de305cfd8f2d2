package prefault_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chatterm/chat/internal/prefault"
	"github.com/chatterm/chat/internal/prefault/faulttest"
)

// After HeapAhead, the heap's next allocations are carved from pages that
// are already there. It runs in a process of its own with the collector
// off, so that the heap only grows, as it does during the TUI's start.
func TestHeapAheadPopulatesTheNextAllocations(t *testing.T) {
	if os.Getenv("PREFAULT_FRESH") == "1" {
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
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeapAheadPopulatesTheNextAllocations$", "-test.v")
	cmd.Env = append(os.Environ(), "PREFAULT_FRESH=1", "GOGC=off")
	out, err := cmd.CombinedOutput()
	t.Logf("the allocating process:\n%s", out)
	if err != nil {
		t.Fatalf("the allocating process: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("the allocating process could not count its page faults")
	}
}
