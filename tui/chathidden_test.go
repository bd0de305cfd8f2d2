package tui

import (
	"strings"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// A chat left behind the inbox takes none of a commit's messages (nothing
// merged, nothing drawn), and opening it again shows what it would have
// shown had it taken them.
func TestHiddenChatTakesACommitWhenShown(t *testing.T) {
	msgs := bobStream(8, 40)
	run := func(hiddenTakes bool) (h *harness, taken, draws int) {
		be := fixture()
		h = newHarness(t, be, 100, 30)
		h.key("enter", "esc", "esc") // bob, then the inbox again
		if h.root().page != pageInbox || h.root().chat.shown {
			t.Fatal("esc twice did not bring the inbox back in the chat's place")
		}
		if hiddenTakes { // as before: the chat off screen took each commit
			m := h.root()
			m.chat.shown = true
			h.m = m
		}
		be.mu.Lock()
		be.msgs[bobConv] = append(be.msgs[bobConv], msgs...)
		be.mu.Unlock()
		before := h.root().chat
		h.send(client.MessagesEvent{Messages: msgs})
		after := h.root().chat
		taken, draws = len(after.msgs)-len(before.msgs), after.draws-before.draws
		h.key("enter") // bob again
		return h, taken, draws
	}
	hidden, taken, draws := run(false)
	took, tookTaken, _ := run(true)
	if tookTaken != len(msgs) {
		t.Fatalf("a chat made to take the commit off screen took %d of %d: the test no longer sees the old path", tookTaken, len(msgs))
	}
	if taken != 0 || draws != 0 {
		t.Fatalf("the chat behind the inbox took %d messages and drew %d times, want none", taken, draws)
	}
	if got, want := hidden.screen(), took.screen(); got != want {
		t.Fatalf("opened again after a commit it did not take:\n%s\nwant as when it took them:\n%s", got, want)
	}
	if !strings.Contains(hidden.screen(), "stream line 8 ") {
		t.Fatalf("opened again, the chat does not show the commit's first message, the first unread:\n%s", hidden.screen())
	}
}

// A copy of our own message still waiting for the server's answer retires
// when the message comes stored, on screen or not: quitting from the inbox
// does not count it as still sending.
func TestHiddenChatRetiresOwnPending(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 30)
	h.key("enter", "esc", "esc")
	mine := wire.Message{ConversationID: bobConv, MessageID: "mine-1", SenderID: "alice", Content: "on its way", Timestamp: fixtureNow}
	m := h.root()
	m.chat.pending = []wire.Message{mine, {ConversationID: bobConv, MessageID: "mine-2", SenderID: "alice", Content: "still going", Timestamp: fixtureNow}}
	h.m = m
	mine.SeqNo = 8
	h.send(client.MessagesEvent{Messages: []wire.Message{mine}})
	if p := h.root().chat.pending; len(p) != 1 || p[0].MessageID != "mine-2" {
		t.Fatalf("pending after its first came stored: %v, want mine-2 alone", p)
	}
}
