package tui

import (
	"slices"
	"strings"
	"testing"
)

// L L in a group's chat leaves it: the first L asks, another key in between
// asks again, the second L leaves, closes the chat and the inbox no longer
// lists the group. A direct chat cannot be left.
func TestLeaveFromTheChat(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 30)
	h.key("enter", "esc") // bob: a direct chat, read
	h.key("L")
	h.wantScreen("a direct chat cannot be left")
	h.key("L")
	if len(be.left) != 0 {
		t.Fatalf("L L left a direct chat: %v", be.left)
	}
	h.key("esc", "j", "enter", "esc") // the team, read
	if h.root().chat.conv.ConversationID != "g:team" {
		t.Fatalf("opened %s, want the team", h.root().chat.conv.ConversationID)
	}
	h.key("L")
	h.wantScreen("leave team? press L again")
	h.key("k", "L") // another key in between: it asks again
	if len(be.left) != 0 {
		t.Fatalf("left after L, k, L: %v", be.left)
	}
	h.key("L")
	if !slices.Equal(be.left, []string{"g:team"}) {
		t.Fatalf("left %v, want the team", be.left)
	}
	if h.root().page != pageInbox {
		t.Fatal("the chat of the group left is still open")
	}
	h.wantScreen("you left team")
	for _, e := range h.root().inbox.entries {
		if e.ConversationID == "g:team" {
			t.Fatalf("the inbox still lists the team:\n%s", h.screen())
		}
	}
	if s := h.screen(); strings.Contains(s, "works for me") {
		t.Fatalf("the team's row is still drawn:\n%s", s)
	}
}
