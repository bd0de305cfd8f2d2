package tui

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// A help card taller than the screen says so and scrolls with ↑/↓ (it was cut
// at 60×20, the keys below the cut out of reach); any other key closes it.
func TestHelpScrollsOnASmallScreen(t *testing.T) {
	h := newHarness(t, fixture(), 60, 20)
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

// At 120×35 the whole card shows at once, and it names every binding of the
// KeyMap (the login form's own toggle aside: the card is not reachable
// there), and the keys screens read for themselves.
func TestHelpFitsAndIsComplete(t *testing.T) {
	h := newHarness(t, fixture(), 120, 35)
	h.key("?")
	s := h.screen()
	if strings.Contains(s, "for more") {
		t.Fatalf("the card scrolls at 120×35:\n%s", s)
	}
	km := reflect.ValueOf(DefaultKeyMap())
	for i := range km.NumField() {
		name := km.Type().Field(i).Name
		if name == "ToggleMode" {
			continue
		}
		b := km.Field(i).Interface().(key.Binding)
		if k := b.Help().Key; !strings.Contains(s, k+" ") {
			t.Errorf("%s (%s) is not on the card", name, k)
		}
	}
	for _, k := range []string{"f1", "ctrl+j", "s/v", "/attach", "1–6", "add members"} {
		if !strings.Contains(s, k) {
			t.Errorf("%q is not on the card", k)
		}
	}
	if t.Failed() {
		t.Logf("the card:\n%s", s)
	}
}
