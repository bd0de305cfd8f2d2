package tui

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Drawing only what is new gives the lines a full redraw gives: live
// messages from two senders across a day change, a run of one sender, an
// event, the unread marker and a selection in place.
func TestAppendedLinesMatchAFullRedraw(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob: opens at the unread marker
	bob := wire.DirectConversationID("alice", "bob")
	at := fixtureNow.Add(-time.Minute)
	for i := range 12 {
		sender := []string{"bob", "bob", "carol_with_a_long_name", "alice"}[i%4]
		m := wire.Message{ConversationID: bob, SeqNo: int64(8 + i), MessageID: fmt.Sprintf("live%d", i), SenderID: sender,
			Content: fmt.Sprintf("live message %d, long enough to wrap when the window is narrow enough for it to", i), Timestamp: at.Add(time.Duration(i) * 3 * time.Minute)}
		if i == 5 {
			m.Kind, m.TargetSeq, m.Content = wire.KindReaction, 3, "👍"
		}
		h.send(client.MessageEvent{Message: m})
		c := h.root().chat
		incremental := slices.Clone(c.lines)
		c.drawn = drawnState{}
		c.render()
		if !slices.Equal(incremental, c.lines) {
			t.Fatalf("after live message %d the appended lines differ from a full redraw:\n%q\n%q", i, incremental, c.lines)
		}
	}
}

// The sidebar and the status line are drawn again only when what they show
// changed: a View after each change gives what a View with nothing kept
// gives, and a View after nothing changed draws neither.
func TestSidebarAndStatusDrawnWhenTheyChange(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 120, 30)
	h.key("enter") // bob, with the conversation list beside it
	fresh := func() string {
		m := h.root()
		saved := m.c.parts
		m.c.parts = partsShown{}
		s := m.render()
		m.c.parts = saved
		return s
	}
	check := func(step string) {
		t.Helper()
		if got, want := h.root().render(), fresh(); got != want {
			t.Fatalf("%s: the kept parts differ from a fresh drawing:\n%s\n%s", step, got, want)
		}
		// The widths kept with the chat's lines are their widths.
		lines, widths := h.root().chat.viewLines()
		for i, l := range lines {
			if widths[i] >= 0 && widths[i] != ansi.StringWidth(l) {
				t.Fatalf("%s: line %d %q kept as %d cells wide, is %d", step, i, l, widths[i], ansi.StringWidth(l))
			}
		}
	}
	check("opened")
	p := &h.root().c.parts
	side, status := p.sidebarDraws, p.statusDraws
	first := h.root().render()
	if again := h.root().render(); again != first || p.sidebarDraws != side || p.statusDraws != status {
		t.Fatalf("nothing changed, yet drawn again (sidebar %d→%d, status %d→%d) or different", side, p.sidebarDraws, status, p.statusDraws)
	}

	carol := wire.DirectConversationID("alice", "carol")
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: carol, SeqNo: 2, MessageID: "c2", SenderID: "carol",
		Content: "one more thing", Timestamp: fixtureNow}})
	check("a message in another chat")
	if p.sidebarDraws == side {
		t.Fatal("carol's unread count changed, yet the sidebar was not drawn again")
	}
	h.wantScreen("carol")

	h.send(flashMsg{text: "copied the link", err: false})
	check("a notice")
	h.wantScreen("copied the link")

	bob := wire.DirectConversationID("alice", "bob")
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bob, SeqNo: 8, MessageID: "b8", SenderID: "bob",
		Content: "back now?", Timestamp: fixtureNow}})
	check("a message in the open chat")
	h.wantScreen("back now?")

	h.send(client.StateEvent{State: client.State{Status: client.Offline}})
	check("offline")
	h.wantScreen("offline")

	h.key("j")
	check("a key")
}

// What is typed shows in the next frame: the composer's lines are kept with
// the drawing they were split from, not with the first one (a frame kept
// showing the placeholder while a message was typed).
func TestTypedTextShowsInTheComposer(t *testing.T) {
	h := newHarness(t, fixture(), 120, 30)
	h.key("enter")
	h.wantScreen("Write a message")
	h.typeText("hello bob")
	h.wantScreen("› hello bob")
	h.typeText("!")
	h.wantScreen("› hello bob!")
}
