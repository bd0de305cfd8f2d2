package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Issue 28: a burst in the hold-off keeps what its summary tells (a count,
// the first message, the senders), not every message: the slice of them
// cost a tenth of the TUI's CPU with the inbox shown. The summary reads as
// before; one message held is told alone, as before.
func TestNotifyHoldOffKeepsTheSummaryOnly(t *testing.T) {
	be := fixture()
	h := newHarnessWith(t, be, 100, 24, func(o *Options) { o.Notify = NotifyOSC9 })
	var raw []string
	h.before = func(msg tea.Msg) []tea.Msg {
		if r, ok := msg.(tea.RawMsg); ok {
			raw = append(raw, r.Msg.(string))
		}
		return nil
	}
	seq := int64(100)
	from := func(sender, conv, text string) {
		seq++
		h.send(client.MessageEvent{Message: wire.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("n", seq), SenderID: sender, Content: text, Timestamp: fixtureNow}})
	}
	from("bob", bobConv, "first")
	const burst = 40
	for i := range burst {
		if i%3 == 2 {
			from("carol", carolConv, fmt.Sprint("c", i))
		} else {
			from("bob", bobConv, fmt.Sprint("b", i))
		}
	}
	held := h.m.(Model).held
	if held.count != burst || held.first.Content != "b0" || fmt.Sprint(held.senders) != "[bob carol]" {
		t.Fatalf("the hold-off keeps %d messages, first %q, senders %v; want %d, \"b0\", [bob carol]",
			held.count, held.first.Content, held.senders, burst)
	}
	h.send(notifyHeldMsg{})
	if want := fmt.Sprintf("\x1b]9;chat: %d new messages from bob, carol\x07", burst); len(raw) != 2 || raw[1] != want {
		t.Fatalf("notifications %q, want the first and %q", raw, want)
	}
	if held := h.m.(Model).held; held.count != 0 || held.senders != nil {
		t.Fatalf("the summary told, the hold-off still keeps %+v", held)
	}

	// One message in the next hold-off is told alone, with its text.
	from("carol", carolConv, "only one")
	h.send(notifyHeldMsg{})
	if len(raw) != 3 || raw[2] != "\x1b]9;carol: only one\x07" {
		t.Fatalf("one held message told as %q", raw[2:])
	}
}
