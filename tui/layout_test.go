package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// At 200 columns a short message's tick follows its text (text wraps at
// maxContentW), instead of sitting at the far edge of the screen.
func TestTickNearShortMessagesOnWideScreens(t *testing.T) {
	h := newHarness(t, fixture(), 200, 30)
	h.key("enter") // bob
	for _, line := range strings.Split(h.screen(), "\n") {
		if !strings.Contains(line, "morning! the demo build") {
			continue
		}
		start, col := strings.Index(line, "12:30"), strings.Index(line, "✓✓")
		if start < 0 || col < 0 {
			t.Fatalf("no time or tick in %q", line)
		}
		// time, sender ("alice"), a space, the text column, the tick
		if d := ansi.StringWidth(line[start:col]); d > timeColW+5+1+maxContentW+tickColW {
			t.Fatalf("the tick is %d columns from the start of the message: %q", d, line)
		}
		return
	}
	t.Fatalf("no line of alice's message:\n%s", h.screen())
}
