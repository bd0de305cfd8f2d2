package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// The chat's header is drawn again only when what it shows moved: messages
// arriving leave it as it was, someone typing redraws it, and each View
// reads as a drawing with nothing kept.
func TestChatHeaderDrawnWhenItChanges(t *testing.T) {
	h := newHarness(t, fixture(), 120, 30)
	h.key("enter") // bob
	fresh := func() string {
		m := h.root()
		saved := m.c.header
		m.c.header = headerShown{}
		s := m.render()
		m.c.header = saved
		return s
	}
	check := func(step string) {
		t.Helper()
		if got, want := h.root().render(), fresh(); got != want {
			t.Fatalf("%s: the kept header differs from a fresh drawing:\n%s\n%s", step, got, want)
		}
	}
	check("opened")
	p := &h.root().c.header
	draws := p.draws
	bob := wire.DirectConversationID("alice", "bob")
	for i := range 3 {
		h.send(client.MessageEvent{Message: wire.Message{ConversationID: bob, SeqNo: int64(8 + i), MessageID: "h" + string(rune('a'+i)),
			SenderID: "bob", Content: "more news", Timestamp: fixtureNow}})
		check("a message")
	}
	if p.draws != draws {
		t.Fatalf("three messages drew the header %d times, want 0", p.draws-draws)
	}
	h.send(client.TypingEvent{ConversationID: bob, UserID: "bob", At: fixtureNow})
	check("bob typing")
	h.wantScreen("is typing")
	if p.draws == draws {
		t.Fatal("bob is typing, yet the header was not drawn again")
	}
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	check("a resize")
}
