package prefault_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chatterm/chat/internal/prefault"
	"github.com/chatterm/chat/internal/prefault/faulttest"
)

var kept [][]byte

// allocate makes n bytes of new heap objects, 64 KiB each, and writes every
// page of them, as a program's first allocations do.
func allocate(n int) {
	for ; n > 0; n -= 64 << 10 {
		b := make([]byte, 64<<10)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		kept = append(kept, b)
	}
}

// After HeapAhead, the heap's next allocations are carved from pages that
// are already there. It runs in a process of its own with the collector
// off, so that the heap only grows, as it does during the TUI's start.
func TestHeapAheadPopulatesTheNextAllocations(t *testing.T) {
	if os.Getenv("PREFAULT_FRESH") == "1" {
		c := faulttest.NewCounter(t)
		allocate(1 << 20)
		if n := c.Faults(t); n < 128 {
			t.Fatalf("1 MiB of new objects took %d page faults: the counter does not count them", n)
		}
		if err := prefault.HeapAhead(4 << 20); err != nil {
			t.Skipf("the heap was not populated: %v", err)
		}
		before := c.Faults(t)
		allocate(2 << 20)
		if n := c.Faults(t) - before; n > 50 {
			t.Errorf("2 MiB of new objects after HeapAhead(4 MiB) took %d page faults", n)
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
