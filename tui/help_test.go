package tui

import "testing"

// A help card taller than the screen says so and scrolls with ↑/↓ (it was cut
// at 60×20, the keys below the cut out of reach); any other key closes it.
func TestHelpScrollsOnASmallScreen(t *testing.T) {
	h := newHarness(t, fixture(), 60, 20)
	h.key("?")
	h.wantScreen("↑/↓ for more")
	for range 80 {
		h.key("down")
	}
	h.wantScreen("pgdn") // the last binding of the card
	h.key("x")
	if h.root().overlay != overlayNone {
		t.Fatal("another key did not close the card")
	}
}
