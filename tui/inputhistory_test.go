package tui

import "testing"

// ctrl+p in the composer brings back what was sent in this conversation,
// newest first, and up and down then browse it; down goes forward to an empty
// composer; a composer with text of its own keeps up and down for the cursor.
// (Up in an empty composer edits the newest message of mine: actions_test.go.)
func TestInputHistory(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	for _, text := range []string{"first", "second"} {
		h.typeText(text)
		h.key("enter")
	}
	value := func() string { return h.m.(Model).chat.compose.Value() }
	for _, step := range []struct{ key, want string }{
		{"ctrl+p", "second"}, {"up", "first"}, {"up", "first"}, {"down", "second"}, {"ctrl+n", ""},
	} {
		h.key(step.key)
		if got := value(); got != step.want {
			t.Fatalf("after %s: composer %q, want %q", step.key, got, step.want)
		}
	}
	h.typeText("draft")
	h.key("up")
	if got := value(); got != "draft" {
		t.Fatalf("up in a composer with its own text replaced it: %q", got)
	}
	// Another conversation has its own history.
	h.key("ctrl+c", "esc", "esc", "j", "enter")
	h.key("ctrl+p")
	if got := value(); got != "" {
		t.Fatalf("bob's history shows in another conversation: %q", got)
	}
}
