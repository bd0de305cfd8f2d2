package widthwarm

import (
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/chatterm/chat/internal/prefault/faulttest"
)

// The linkname reaches go-runewidth's own table: once built, it holds the
// widths the package gives, in both its halves.
func TestTableIsGoRunewidths(t *testing.T) {
	Start()
	select {
	case <-Built():
	case <-time.After(time.Minute):
		t.Fatal("the width table was not built within a minute")
	}
	narrow := &runewidth.Condition{StrictEmojiNeutral: true}
	wide := &runewidth.Condition{StrictEmojiNeutral: true, EastAsianWidth: true}
	for _, r := range []rune{'a', '…', '▌', '─', '›', 'é', '世', 0x1F600, 0x10FFFD, 0x0301} {
		if got, want := int(strictWidthLUT[0][r]), narrow.RuneWidth(r); got != want {
			t.Errorf("the linked table gives %U width %d, go-runewidth %d", r, got, want)
		}
		if got, want := int(strictWidthLUT[1][r]), wide.RuneWidth(r); got != want {
			t.Errorf("the linked East Asian table gives %U width %d, go-runewidth %d", r, got, want)
		}
	}
}

// Building the table writes 2.2 MB, 550 pages: asked for at once before,
// they take no page fault each. The build runs in a process of its own, so
// that no other test has built the table yet.
func TestBuildTakesNoPageFaults(t *testing.T) {
	faulttest.InFreshProcess(t, nil, func(t *testing.T) {
		faulttest.RequirePopulate(t)
		c := faulttest.NewCounter(t)
		build()
		if n := c.Faults(t); n > 50 {
			t.Errorf("building the width table took %d page faults", n)
		}
	})
}
