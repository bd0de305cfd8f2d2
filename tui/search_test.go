package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/wire"
)

// / in the inbox searches every conversation; each keystroke searches again;
// enter opens the conversation at the message found, selected, loading older
// pages until it is there.
func TestSearchJumpsToTheMessage(t *testing.T) {
	be := fixture()
	bob := wire.DirectConversationID("alice", "bob")
	// A long conversation: the hit is far older than the newest page.
	var ms []wire.Message
	for i := 1; i <= 300; i++ {
		text := fmt.Sprintf("filler %d", i)
		if i == 20 {
			text = "the invoice for October is attached"
		}
		ms = append(ms, wire.Message{ConversationID: bob, SeqNo: int64(i), MessageID: fmt.Sprintf("x%d", i), SenderID: "bob",
			Content: text, Timestamp: fixtureNow.Add(time.Duration(i-300) * time.Minute)})
	}
	be.msgs[bob] = ms
	for i := range be.inbox {
		if be.inbox[i].ConversationID == bob {
			be.inbox[i].LastSeq, be.inbox[i].LastReadSeq, be.inbox[i].Unread = 300, 300, 0
		}
	}
	h := newHarness(t, be, 90, 30)
	h.key("/")
	h.wantScreen("Search all conversations")
	h.typeText("invoice")
	h.wantScreen("bob · Mar 10 10:50 bob")
	h.wantScreen("the invoice for October")
	h.key("enter")
	chat := h.root().chat
	if h.root().page != pageChat || chat.conv.ConversationID != bob {
		t.Fatalf("enter did not open bob's chat (page %v, %s)", h.root().page, chat.conv.ConversationID)
	}
	if chat.selected != 20 || chat.jumpTo != 0 {
		t.Fatalf("selected %d, still jumping to %d", chat.selected, chat.jumpTo)
	}
	h.wantScreen("▶")
	h.wantScreen("the invoice for October is attached")

	// In a chat, / searches that chat only.
	h.key("esc", "/")
	h.wantScreen("Search bob")
	h.typeText("standup")
	if s := h.screen(); strings.Contains(s, "standup moved") {
		t.Fatalf("a search of bob's chat found the team's message:\n%s", s)
	}
	h.wantScreen("nothing in the messages on this machine")
}

func TestGoldenSearch(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("/")
	h.typeText("demo")
	h.wantScreen("the demo build is ready")
	checkFrame(t, h.screen(), 80, 24)
	golden(t, "search", h.screen())
}

// While a search is under way the box says so, and while the cache indexes a
// backlog it counts it down, then answers: never "nothing" before the search
// has looked.
func TestSearchSaysWhatItIsDoing(t *testing.T) {
	be := fixture()
	be.searchBacklog = 5000
	h := newHarness(t, be, 90, 30)
	h.key("/")
	m := h.root().search
	m, cmd := m.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	if v := ansi.Strip(m.View()); !strings.Contains(v, "searching…") || strings.Contains(v, "nothing") {
		t.Fatalf("a search under way reads:\n%s", v)
	}
	var steps []string
	for cmd != nil {
		var res searchResultsMsg
		for _, msg := range runCmds([]tea.Cmd{cmd}) {
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, msg := range runCmds(b) {
					if r, ok := msg.(searchResultsMsg); ok {
						res = r
					}
				}
			}
			if r, ok := msg.(searchResultsMsg); ok {
				res = r
			}
		}
		if res.query == "" {
			break
		}
		m, cmd = m.Update(res)
		v := ansi.Strip(m.View())
		if i := strings.Index(v, "indexing "); i >= 0 {
			steps = append(steps, strings.Fields(v[i:])[1])
		} else if strings.Contains(v, "nothing") {
			t.Fatalf("said nothing before the search looked:\n%s", v)
		}
	}
	if want := []string{"3000", "1000"}; !slices.Equal(steps, want) {
		t.Fatalf("indexing counts shown: %v, want %v", steps, want)
	}
	if len(m.hits) == 0 {
		t.Fatalf("no hits after indexing:\n%s", ansi.Strip(m.View()))
	}
}
