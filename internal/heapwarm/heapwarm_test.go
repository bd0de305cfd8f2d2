package heapwarm

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/prefault/faulttest"
)

func TestForTUI(t *testing.T) {
	for _, tc := range []struct {
		args []string
		tui  bool
	}{
		{[]string{"chat"}, true},
		{[]string{"chat", "send", "--to", "bob"}, false},
		{[]string{"chat", "--help"}, false},
		{[]string{"chat", "--home", "/tmp/x"}, false}, // runTUI starts it
	} {
		if got := ForTUI(tc.args); got != tc.tui {
			t.Errorf("ForTUI(%q) = %v, want %v", tc.args, got, tc.tui)
		}
	}
}

var kept [][]byte

// Once Start has run, the start's next few MB of heap objects are written
// without a page fault each. In a process of its own, the collector off, as
// the TUI's start holds it.
func TestStartPopulatesTheHeap(t *testing.T) {
	if os.Getenv("HEAPWARM_FRESH") == "1" {
		Start()
		Start() // once
		select {
		case <-Done():
		case <-time.After(time.Minute):
			t.Fatal("the heap was not populated within a minute")
		}
		c := faulttest.NewCounter(t)
		for range 32 { // 2 MiB
			b := make([]byte, 64<<10)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			kept = append(kept, b)
		}
		if n := c.Faults(t); n > 50 {
			t.Errorf("2 MiB of new objects after Start took %d page faults", n)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartPopulatesTheHeap$", "-test.v")
	cmd.Env = append(os.Environ(), "HEAPWARM_FRESH=1", "GOGC=off")
	out, err := cmd.CombinedOutput()
	t.Logf("the allocating process:\n%s", out)
	if err != nil {
		t.Fatalf("the allocating process: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("the allocating process could not count its page faults")
	}
}
