package tui

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// A help card wider than the screen in columns and taller than it in one
// (40×20) says so and scrolls with ↑/↓, the keys below the cut in reach; any
// other key closes it.
func TestHelpScrollsOnASmallScreen(t *testing.T) {
	h := newHarness(t, fixture(), 40, 20)
	h.key("?")
	h.wantScreen("↑/↓ for more")
	for range 80 {
		h.key("down")
	}
	h.wantScreen("shift+tab") // the last binding of the card
	h.key("x")
	if h.root().overlay != overlayNone {
		t.Fatal("another key did not close the card")
	}
}

// helpPages opens the card and reads each of its pages, turning with tab
// until the first comes round again (at most 10).
func helpPages(t *testing.T, h *harness) []string {
	t.Helper()
	h.key("?")
	first := h.screen()
	pages := []string{first}
	for range 10 {
		h.key("tab")
		if h.root().overlay != overlayHelp {
			t.Fatal("tab closed the card")
		}
		s := h.screen()
		if s == first {
			return pages
		}
		pages = append(pages, s)
	}
	return pages
}

// At 120×35 and 60×20 the card shows in pages, nothing behind a scroll, and
// its pages name every binding of the KeyMap (the login form's own toggle
// aside: the card is not reachable there), and the keys screens read for
// themselves. (Before pages, one more key in the chat made the 120×35 card
// a third column too wide, and it scrolled.)
func TestHelpIsCompleteInPages(t *testing.T) {
	for _, size := range [][2]int{{120, 35}, {60, 20}} {
		h := newHarness(t, fixture(), size[0], size[1])
		pages := helpPages(t, h)
		all := strings.Join(pages, "\n")
		if strings.Contains(all, "for more") {
			t.Fatalf("the card scrolls at %dx%d:\n%s", size[0], size[1], all)
		}
		km := reflect.ValueOf(DefaultKeyMap())
		for i := range km.NumField() {
			name := km.Type().Field(i).Name
			if name == "ToggleMode" {
				continue
			}
			b := km.Field(i).Interface().(key.Binding)
			if k := b.Help().Key; !strings.Contains(all, k+" ") {
				t.Errorf("%dx%d: %s (%s) is not on the card", size[0], size[1], name, k)
			}
		}
		for _, k := range []string{"f1", "ctrl+j", "s/v", "/attach", "1–6", "add members", "L L"} {
			if !strings.Contains(all, k) {
				t.Errorf("%dx%d: %q is not on the card", size[0], size[1], k)
			}
		}
		if t.Failed() {
			t.Logf("the card's %d pages:\n%s", len(pages), all)
		}
		h.key("x")
		if h.root().overlay != overlayNone {
			t.Fatal("another key did not close the card")
		}
	}
}

// At 120×35 the card takes at most two pages.
func TestHelpAtTheUsualSize(t *testing.T) {
	h := newHarness(t, fixture(), 120, 35)
	if n := len(helpPages(t, h)); n > 2 {
		t.Fatalf("the card takes %d pages at 120×35", n)
	}
}
