package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// f2 hands the mouse to the terminal (text can be selected) and takes it back.
func TestMouseToggle(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	if h.m.View().MouseMode != tea.MouseModeCellMotion {
		t.Fatal("the mouse is not captured at start")
	}
	h.key("f2")
	if h.m.View().MouseMode != tea.MouseModeNone {
		t.Fatal("f2 did not release the mouse")
	}
	h.wantScreen("mouse released")
	h.key("f2")
	if h.m.View().MouseMode != tea.MouseModeCellMotion {
		t.Fatal("f2 again did not capture the mouse")
	}
}
