package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/wire"
)

// senderCell is the sender column of the chat line at the given time,
// trailing spaces dropped, and the column's width: from after the time to
// the text.
func senderCell(t *testing.T, screen, at, text string) (name string, width int) {
	t.Helper()
	for _, line := range strings.Split(screen, "\n") {
		i := strings.Index(line, at+" ")
		if i < 0 {
			continue
		}
		rest := line[i+len(at)+1:]
		j := strings.Index(rest, " "+text)
		if j < 0 {
			t.Fatalf("no %q after %s in %q", text, at, line)
		}
		return strings.TrimRight(rest[:j], " "), ansi.StringWidth(rest[:j])
	}
	t.Fatalf("no line at %s:\n%s", at, screen)
	return "", 0
}

// A long display name widens the sender column as far as the screen allows:
// cut with "…" at 60 columns, where the text keeps the room it had, wider
// than the old 12-cell cap at 120 (beside the conversation list), whole at
// 200; every line's text starts in the same column; selecting a message
// whose sender is cut shows the name whole in the header.
func TestSenderColumnFitsTheScreen(t *testing.T) {
	const long = "Maximilian Featherstone"
	for _, c := range []struct {
		width     int
		whole     bool
		minColumn int // at least this wide (the old cap was 12)
		maxColumn int
	}{
		{width: 60, whole: false, minColumn: 12, maxColumn: 12},
		{width: 120, whole: false, minColumn: 13, maxColumn: len(long) - 1},
		{width: 200, whole: true, minColumn: len(long), maxColumn: len(long)},
	} {
		be := namedFixture()
		be.profiles["bob"] = wire.Profile{UserID: "bob", DisplayName: long}
		h := newHarness(t, be, c.width, 30)
		h.key("j", "enter") // team: carol, bob, alice
		h.wantScreen("works for me")
		screen := h.screen()
		checkFrame(t, screen, c.width, 30)
		bob, w := senderCell(t, screen, "14:39", "ok")
		carol, carolW := senderCell(t, screen, "14:38", "standup")
		if carol != "carol" || carolW != w {
			t.Fatalf("%d columns: carol's line has %q in %d cells, bob's column is %d:\n%s", c.width, carol, carolW, w, screen)
		}
		if w < c.minColumn || w > c.maxColumn {
			t.Errorf("%d columns: the sender column is %d cells, want %d to %d:\n%s", c.width, w, c.minColumn, c.maxColumn, screen)
		}
		if c.whole && bob != long {
			t.Errorf("%d columns: bob shows as %q, want %q whole", c.width, bob, long)
		}
		if !c.whole && (!strings.HasSuffix(bob, "…") || !strings.HasPrefix(long, strings.TrimSuffix(bob, "…"))) {
			t.Errorf("%d columns: bob shows as %q, want %q cut with …", c.width, bob, long)
		}
		h.key("esc", "s", "up") // reading: alice's message, then bob's
		if got := strings.Contains(h.screen(), "▶ "+long); got == c.whole {
			t.Errorf("%d columns: the header names the selected sender %q: %v, want %v:\n%s", c.width, long, got, !c.whole, h.screen())
		}
	}
}
