package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// A message from someone else that arrives unseen rings the bell, once per
// burst; one on screen in a focused terminal, or our own, does not. The
// desktop modes send the sender and a sanitised preview.
func TestNotifyOnUnseenMessages(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 24)
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
		h.send(client.MessageEvent{Message: wire.Message{ConversationID: conv, SeqNo: seq, MessageID: "n" + text, SenderID: sender, Content: text, Timestamp: fixtureNow}})
	}
	rearm := func() { // as if the gap between two rings had passed
		m := h.m.(Model)
		m.lastNotify = time.Time{}
		h.m = m
	}

	from("bob", bobConv, "one") // the inbox is open: unseen
	from("bob", bobConv, "two") // the same burst
	if len(raw) != 1 || raw[0] != "\a" {
		t.Fatalf("rings for a burst of two = %q, want one bell", raw)
	}
	rearm()
	from("alice", bobConv, "mine")
	if len(raw) != 1 {
		t.Fatalf("our own message rang: %q", raw)
	}

	h.key("enter") // bob's chat, on screen, focused
	rearm()
	from("bob", bobConv, "seen")
	if len(raw) != 1 {
		t.Fatalf("a message on screen rang: %q", raw)
	}
	h.send(tea.BlurMsg{})
	from("bob", bobConv, "while away")
	if len(raw) != 2 {
		t.Fatalf("a message while the terminal is in the background did not ring: %q", raw)
	}

	h.m.(Model).c.notify = NotifyOSC9
	rearm()
	from("bob", bobConv, "pwned\x1b]0;title\a; done")
	osc := raw[len(raw)-1]
	if !strings.HasPrefix(osc, "\x1b]9;bob: ") || !strings.HasSuffix(osc, "\x07") {
		t.Fatalf("OSC 9 notification = %q", osc)
	}
	if inner := osc[len("\x1b]9;") : len(osc)-1]; strings.ContainsAny(inner, "\x1b\a;") {
		t.Fatalf("the notification carries escape characters or separators from the message: %q", inner)
	}

	h.m.(Model).c.notify = NotifyOff
	rearm()
	n := len(raw)
	from("carol", carolConv, "quiet please")
	if len(raw) != n {
		t.Fatalf("notify off still rang: %q", raw[n:])
	}
}

// M mutes the open conversation: its messages ring nothing, others still do;
// the mute is stored by the backend, and read back at the next start.
func TestMuteSilencesAConversation(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 24)
	var rings int
	h.before = func(msg tea.Msg) []tea.Msg {
		if _, ok := msg.(tea.RawMsg); ok {
			rings++
		}
		return nil
	}
	h.key("enter", "esc", "M") // bob's chat, reading, mute
	h.wantScreen("muted")
	if !be.muted[bobConv] {
		t.Fatalf("the mute was not stored: %v", be.muted)
	}
	h.send(tea.BlurMsg{})
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 50, MessageID: "q1", SenderID: "bob", Content: "shh", Timestamp: fixtureNow}})
	if rings != 0 {
		t.Fatalf("a muted conversation rang %d times", rings)
	}
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: carolConv, SeqNo: 50, MessageID: "q2", SenderID: "carol", Content: "hey", Timestamp: fixtureNow}})
	if rings != 1 {
		t.Fatalf("another conversation rang %d times, want 1", rings)
	}

	// A new start reads the stored mutes.
	again := fixture()
	again.muted = be.muted
	h2 := newHarness(t, again, 100, 24)
	if !h2.m.(Model).c.muted[bobConv] {
		t.Fatal("the mute was not read back at start")
	}
}

// Messages within the hold-off after a notification are not dropped: the end
// of the hold-off tells of them all in one notification.
func TestNotifySummarisesTheHoldOff(t *testing.T) {
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
		h.send(client.MessageEvent{Message: wire.Message{ConversationID: conv, SeqNo: seq, MessageID: "n" + text, SenderID: sender, Content: text, Timestamp: fixtureNow}})
	}
	from("bob", bobConv, "one")
	from("bob", bobConv, "two")       // held
	from("carol", carolConv, "three") // held
	from("bob", bobConv, "four")      // held
	if len(raw) != 1 {
		t.Fatalf("notifications during the hold-off = %q, want only the first", raw)
	}
	h.send(notifyHeldMsg{}) // the hold-off is over
	if len(raw) != 2 || raw[1] != "\x1b]9;chat: 3 new messages from bob, carol\x07" {
		t.Fatalf("after the hold-off: %q, want one summary of the three", raw)
	}
	h.send(notifyHeldMsg{}) // nothing more held: nothing more told
	if len(raw) != 2 {
		t.Fatalf("an empty hold-off notified: %q", raw[2:])
	}
}
