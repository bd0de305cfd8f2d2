package tui

import (
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// The inbox page draws again only the rows whose conversation changed: a
// message redraws its row (and the rows it moved past), the page reads as a
// drawing with nothing kept, and a View after no change draws no row.
func TestInboxDrawsOnlyTheRowsThatChanged(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 30)
	fresh := func() string {
		m := h.root()
		saved := m.c.inboxShown
		m.c.inboxShown = inboxShown{}
		s := m.render()
		m.c.inboxShown = saved
		return s
	}
	check := func(step string) {
		t.Helper()
		if got, want := h.root().render(), fresh(); got != want {
			t.Fatalf("%s: the kept rows differ from a fresh drawing:\n%s\n%s", step, got, want)
		}
	}
	check("shown")
	p := &h.root().c.inboxShown
	rows, title := p.rowDraws, p.titleDraw
	if rows == 0 {
		t.Fatal("no row drawn through the kept rows")
	}
	h.root().render()
	if p.rowDraws != rows || p.titleDraw != title {
		t.Fatalf("nothing changed, yet %d rows and %d titles drawn again", p.rowDraws-rows, p.titleDraw-title)
	}

	// A message into the first conversation: its row, and the title's count.
	first := h.root().inbox.entries[0]
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: first.ConversationID, SeqNo: first.LastSeq + 1,
		MessageID: "new1", SenderID: "bob", Content: "a new line at the top", Timestamp: fixtureNow}})
	check("a message in the top conversation")
	if got := p.rowDraws - rows; got != 1 {
		t.Fatalf("a message in the top conversation drew %d rows, want 1", got)
	}
	h.wantScreen("a new line at the top")
	// The same minute: only the preview and the count move.
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: first.ConversationID, SeqNo: first.LastSeq + 2,
		MessageID: "new2", SenderID: "bob", Content: "and a second one", Timestamp: fixtureNow}})
	check("a second message in the same minute")
	h.wantScreen("and a second one")

	h.key("j") // the selection moves: two rows change
	check("the cursor down")
	rows = p.rowDraws
	h.send(flashMsg{text: "a notice"})
	check("a notice")
	if p.rowDraws != rows {
		t.Fatalf("a notice in the status line drew %d rows", p.rowDraws-rows)
	}
}
