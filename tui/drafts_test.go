package tui

import (
	"testing"

	"github.com/chatterm/chat/client"
)

// restart is the same account started again: a new Model on a backend that
// shares the first one's cache (the drafts and input history kept there).
func restart(t *testing.T, before *fakeBackend) *harness {
	t.Helper()
	be := fixture()
	be.kept = before.kept
	return newHarness(t, be, 80, 24)
}

func TestDraftsKeptAcrossRestart(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	h.typeText("half a thought")
	h.key("ctrl+k")
	h.typeText("team")
	h.key("enter")
	h.typeText("for the team")
	h.key("esc", "esc") // to the inbox, the team's draft still in the composer
	h.key("ctrl+c")     // asks: drafts unsent
	h.key("ctrl+c")

	h = restart(t, be)
	h.key("ctrl+k")
	h.typeText("bob")
	h.key("enter")
	if v := h.root().chat.compose.Value(); v != "half a thought" {
		t.Fatalf("bob's draft after a restart = %q, want %q", v, "half a thought")
	}
	h.key("ctrl+k")
	h.typeText("team")
	h.key("enter")
	if v := h.root().chat.compose.Value(); v != "for the team" {
		t.Fatalf("the team's draft after a restart = %q, want %q", v, "for the team")
	}
}

func TestSentDraftGoneAfterRestart(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	h.typeText("first draft")
	h.key("ctrl+k")
	h.typeText("team")
	h.key("enter") // bob's draft stored as the chat is left
	h.key("ctrl+k")
	h.typeText("bob")
	h.key("enter")
	h.key("enter") // sends it
	h.key("esc", "esc", "q")

	h = restart(t, be)
	h.key("ctrl+k")
	h.typeText("bob")
	h.key("enter")
	if v := h.root().chat.compose.Value(); v != "" {
		t.Fatalf("a sent draft came back after a restart: %q", v)
	}
	h.key("ctrl+p")
	if v := h.root().chat.compose.Value(); v != "first draft" {
		t.Fatalf("ctrl+p after a restart = %q, want the text sent before it", v)
	}
}

func TestInputHistoryKeptAcrossRestart(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	for _, text := range []string{"first", "second"} {
		h.typeText(text)
		h.key("enter")
	}
	h = restart(t, be)
	h.key("ctrl+k")
	h.typeText("bob")
	h.key("enter")
	h.typeText("third")
	h.key("enter")
	value := func() string { return h.root().chat.compose.Value() }
	for _, step := range []struct{ key, want string }{
		{"ctrl+p", "third"}, {"up", "second"}, {"up", "first"}, {"up", "first"},
	} {
		h.key(step.key)
		if got := value(); got != step.want {
			t.Fatalf("after %s: composer %q, want %q (this run's texts after the kept ones)", step.key, got, step.want)
		}
	}
}

func TestCtrlCAsksWithTheOutboxOfOtherChats(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.send(client.StateEvent{State: client.State{Status: client.Offline, Unsent: 3}})
	m, cmd := h.m.Update(keyMsg("ctrl+c"))
	h.m = m
	if quits(cmd) {
		t.Fatal("ctrl+c quit with 3 messages in the outbox")
	}
	h.run(cmd)
	h.wantScreen("3 messages still sending")
}
