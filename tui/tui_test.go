package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

var (
	bobConv   = wire.DirectConversationID("alice", "bob")
	carolConv = wire.DirectConversationID("alice", "carol")
)

// lineWith returns the rendered (styled) screen line holding text.
func (h *harness) lineWith(text string) string {
	h.t.Helper()
	for _, l := range strings.Split(h.m.View().Content, "\n") {
		if strings.Contains(ansi.Strip(l), text) {
			return l
		}
	}
	h.t.Fatalf("no line with %q on screen:\n%s", text, h.screen())
	return ""
}

// tickOf reads the tick at the end of a message's last line: the glyph, and
// whether it carries the read (blue) style.
func (h *harness) tickOf(text string) (glyph string, blue bool) {
	h.t.Helper()
	line := h.lineWith(text)
	plain := strings.TrimRight(ansi.Strip(line), " ")
	switch {
	case strings.HasSuffix(plain, "✓✓"):
		glyph = "✓✓"
	case strings.HasSuffix(plain, "✓"):
		glyph = "✓"
	case strings.HasSuffix(plain, "◷"):
		glyph = "◷"
	case strings.HasSuffix(plain, "✗"):
		glyph = "✗"
	}
	st := h.root().c.styles
	blue = strings.Contains(line, st.TickRead.Render("✓✓"))
	if glyph == "✓✓" && !blue && !strings.Contains(line, st.TickDelivered.Render("✓✓")) {
		h.t.Fatalf("double tick in neither the delivered nor the read style: %q", line)
	}
	return glyph, blue
}

func (h *harness) wantTick(text, glyph string, blue bool) {
	h.t.Helper()
	g, b := h.tickOf(text)
	if g != glyph || b != blue {
		h.t.Fatalf("tick of %q = %q blue=%v, want %q blue=%v\n%s", text, g, b, glyph, blue, h.screen())
	}
}

func TestTicksDirect(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	// From the cached boundaries: bob delivered 5, read 4.
	h.wantTick("morning! the demo build", "✓✓", true)
	h.wantTick("everyone upgraded", "✓✓", false)

	h.typeText("did you see it?")
	h.key("enter")
	if len(be.sends) != 1 || be.sends[0].Content != "did you see it?" {
		t.Fatalf("sends = %+v", be.sends)
	}
	h.wantTick("did you see it?", "◷", false)

	h.send(client.SentEvent{Sent: wire.SendResponse{ConversationID: bobConv, SeqNo: 8, MessageID: be.sends[0].MessageID, Timestamp: fixtureNow}})
	h.wantTick("did you see it?", "✓", false)

	h.send(client.StatusEvent{ConversationID: bobConv, Status: wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 8, LastReadSeq: 4}})
	h.wantTick("did you see it?", "✓✓", false)
	h.wantTick("everyone upgraded", "✓✓", false)

	h.send(client.StatusEvent{ConversationID: bobConv, Status: wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 8, LastReadSeq: 8}})
	h.wantTick("did you see it?", "✓✓", true)
	h.wantTick("everyone upgraded", "✓✓", true)

	// A late, older status must not take a tick back.
	h.send(client.StatusEvent{ConversationID: bobConv, Status: wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 5, LastReadSeq: 5}})
	h.wantTick("did you see it?", "✓✓", true)

	// Our own boundary moving changes nothing: ticks are about the others.
	h.send(client.StatusEvent{ConversationID: bobConv, Status: wire.MemberStatus{UserID: "alice", LastDeliveredSeq: 9, LastReadSeq: 9}})
	h.wantTick("did you see it?", "✓✓", true)
}

// The server can store a message before the command that queued it reports
// back: the client.SentEvent comes first and the message must still end up stored,
// not pending forever (seen in TestTUIGroupOnServer on a loaded machine).
func TestSentEventBeforeSendReturns(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	h.before = func(msg tea.Msg) []tea.Msg {
		sq, ok := msg.(sendQueuedMsg)
		if !ok {
			return nil
		}
		return []tea.Msg{client.SentEvent{Sent: wire.SendResponse{ConversationID: bobConv, SeqNo: 8, MessageID: sq.msg.MessageID, Timestamp: fixtureNow}}}
	}
	h.typeText("quick one")
	h.key("enter")
	h.wantTick("quick one", "✓", false)
	h.send(client.StatusEvent{ConversationID: bobConv, Status: wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 8, LastReadSeq: 8}})
	h.wantTick("quick one", "✓✓", true)
}

func TestTicksGroupTakeTheMinimum(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("j", "enter") // team
	h.typeText("shipping at 5")
	h.key("enter")
	h.send(client.SentEvent{Sent: wire.SendResponse{ConversationID: "g:team", SeqNo: 4, MessageID: be.sends[0].MessageID, Timestamp: fixtureNow}})
	h.wantTick("shipping at 5", "✓", false)

	h.send(client.StatusEvent{ConversationID: "g:team", Status: wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 4, LastReadSeq: 4}})
	h.wantTick("shipping at 5", "✓", false) // carol has not received it

	h.send(client.StatusEvent{ConversationID: "g:team", Status: wire.MemberStatus{UserID: "carol", LastDeliveredSeq: 4, LastReadSeq: 2}})
	h.wantTick("shipping at 5", "✓✓", false) // everyone received, carol has not read

	h.send(client.StatusEvent{ConversationID: "g:team", Status: wire.MemberStatus{UserID: "carol", LastDeliveredSeq: 4, LastReadSeq: 4}})
	h.wantTick("shipping at 5", "✓✓", true)
}

func TestComposeMultilineAndPending(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter")
	h.typeText("first line")
	h.key("alt+enter")
	h.typeText("second line")
	h.key("ctrl+j")
	h.typeText("third")
	if got := h.root().chat.compose.Value(); got != "first line\nsecond line\nthird" {
		t.Fatalf("composer = %q", got)
	}
	h.wantScreen("› third") // the composer grew to show every line
	h.key("enter")
	if len(be.sends) != 1 || be.sends[0].Content != "first line\nsecond line\nthird" {
		t.Fatalf("sends = %+v", be.sends)
	}
	if v := h.root().chat.compose.Value(); v != "" {
		t.Fatalf("composer not cleared: %q", v)
	}
	h.wantTick("third", "◷", false)
	// Empty or blank input sends nothing.
	h.typeText("   ")
	h.key("enter")
	if len(be.sends) != 1 {
		t.Fatalf("blank message was sent: %+v", be.sends)
	}
	// The inbox preview follows at once.
	h.key("esc", "esc")
	h.wantScreen("you: first line second line third")
}

func TestOwnEchoReplacesPending(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter")
	h.typeText("echo me")
	h.key("enter")
	id := be.sends[0].MessageID
	// The server's copy of our message arrives before the sent frame: one line, not two.
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: id, SenderID: "alice", Content: "echo me", Timestamp: fixtureNow}})
	h.send(client.SentEvent{Sent: wire.SendResponse{ConversationID: bobConv, SeqNo: 8, MessageID: id, Timestamp: fixtureNow}})
	if n := strings.Count(h.screen(), "echo me"); n != 1 {
		t.Fatalf("message shown %d times:\n%s", n, h.screen())
	}
	h.wantTick("echo me", "✓", false)
}

func TestSendFailedShowsCross(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter")
	h.typeText("too big")
	h.key("enter")
	h.send(client.SendFailedEvent{ConversationID: bobConv, MessageID: be.sends[0].MessageID, Err: wire.Errorf(wire.CodeTooLarge, "message is over 4096 bytes")})
	h.wantTick("too big", "✗", false)
	h.wantScreen("not sent: message is over 4096 bytes")

	// The inbox does not show it as sent, and reopening the chat keeps its
	// text and the reason (the client keeps refused messages in the outbox).
	be.mu.Lock()
	be.pending[bobConv] = append(be.pending[bobConv], be.sends[0])
	be.refused = map[string]string{be.sends[0].MessageID: "message is over 4096 bytes"}
	be.mu.Unlock()
	h.key("esc", "esc")
	h.wantScreen("✗ not sent: too big")
	h.key("enter")
	h.wantTick("too big", "✗", false)
	h.wantScreen("not sent: message is over 4096 bytes")
}

// deliver stores a message in the fake cache, as the client does before it
// reports it, and sends the event.
func (h *harness) deliver(m wire.Message) {
	h.t.Helper()
	h.be.mu.Lock()
	h.be.msgs[m.ConversationID] = append(h.be.msgs[m.ConversationID], m)
	h.be.mu.Unlock()
	h.send(client.MessageEvent{Message: m})
}

func TestLiveMessages(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	// In the inbox: carol's message moves her to the top with one unread.
	h.deliver(wire.Message{ConversationID: carolConv, SeqNo: 2, MessageID: "c2", SenderID: "carol", Content: "lunch?", Timestamp: fixtureNow})
	lines := strings.Split(h.screen(), "\n")
	if !strings.Contains(lines[1], "carol") || !strings.Contains(lines[2], "lunch?") || !strings.Contains(lines[2], "(1)") {
		t.Fatalf("carol not on top with 1 unread:\n%s", h.screen())
	}
	h.wantScreen("3 unread")
	// A duplicate (at-least-once delivery) changes nothing.
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: carolConv, SeqNo: 2, MessageID: "c2", SenderID: "carol", Content: "lunch?", Timestamp: fixtureNow}})
	h.wantScreen("3 unread")

	// In the open chat, at the bottom: shown and reported read, no unread.
	h.key("g", "enter") // carol, now on top (the selection stayed on bob)
	if be.reads[carolConv] != 2 {
		t.Fatalf("read boundary for carol = %d, want 2", be.reads[carolConv])
	}
	h.deliver(wire.Message{ConversationID: carolConv, SeqNo: 3, MessageID: "c3", SenderID: "carol", Content: "12:30 at the usual place", Timestamp: fixtureNow})
	h.wantScreen("12:30 at the usual place")
	if be.reads[carolConv] != 3 {
		t.Fatalf("read boundary for carol = %d, want 3", be.reads[carolConv])
	}
	// A message for another conversation leaves the chat alone and counts as unread.
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: "g:team", SeqNo: 4, MessageID: "t4", SenderID: "bob", Content: "deploy done", Timestamp: fixtureNow}})
	if strings.Contains(h.screen(), "deploy done") {
		t.Fatalf("team message shown in carol's chat:\n%s", h.screen())
	}
	h.key("esc", "esc")
	h.wantScreen("bob: deploy done")
	h.wantScreen("3 unread") // bob's 2 + team's 1
}

func TestUnknownConversationReloadsInbox(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	be.mu.Lock()
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: "g:new", Type: wire.Group, Name: "new group", LastSeq: 1, LastMessageBody: "welcome", LastMessageSender: "dave", LastMessageAt: fixtureNow, Unread: 1})
	be.mu.Unlock()
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: "g:new", SeqNo: 1, MessageID: "n1", SenderID: "dave", Content: "welcome", Timestamp: fixtureNow}})
	h.wantScreen("# new group")
}

// g reaches the first message of a long conversation in one page: the
// first page in place of the window, not every page between (window.go).
func TestTopReachesTheFirstMessageInOneGo(t *testing.T) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.convs[long] = wire.Conversation{ConversationID: long, Type: wire.Direct}
	be.addMessages(long, []string{"dave", "alice"}, 300, fixtureNow.Add(-time.Minute), func(i int) string { return fmt.Sprintf("message number %03d", i+1) })
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300, LastMessageAt: fixtureNow.Add(-time.Minute)})
	h := newHarness(t, be, 80, 24)
	h.key("enter") // dave: most recent
	h.wantScreen("message number 300")
	h.key("esc", "g")
	h.wantScreen("message number 001")
	h.wantScreen("beginning of the conversation")
	if want := []int64{0, 51}; !slices.Equal(be.historyCalls, want) {
		t.Fatalf("history calls = %v, want the newest page, then the first: %v", be.historyCalls, want)
	}
	if strings.Contains(h.screen(), "to the first message") {
		t.Fatalf("still going to the first message once there:\n%s", h.screen())
	}
	h.wantScreen("G to the newest")
	h.key("G")
	h.wantScreen("message number 300")
}

// Opening a chat with more unread messages than a screen starts at the first
// of them (older pages loaded until it is there), under the "new" marker; U
// goes back there.
func TestOpenAtTheFirstUnread(t *testing.T) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.convs[long] = wire.Conversation{ConversationID: long, Type: wire.Direct}
	be.addMessages(long, []string{"dave"}, 300, fixtureNow.Add(-time.Minute), func(i int) string { return fmt.Sprintf("message number %03d", i+1) })
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300,
		LastReadSeq: 180, LastDeliveredSeq: 300, Unread: 120, LastMessageAt: fixtureNow.Add(-time.Minute)})
	h := newHarness(t, be, 80, 24)
	h.key("enter") // dave: most recent
	h.wantScreen("message number 181")
	h.wantScreen("new")
	if strings.Contains(h.screen(), "message number 300") {
		t.Fatalf("opened at the bottom, not at the first unread:\n%s", h.screen())
	}
	// One page from just above the first unread (176–225), and the page
	// above it as the screen starts near its top: none of those between it
	// and the newest.
	if want := []int64{226, 176}; !slices.Equal(be.historyCalls, want) {
		t.Fatalf("history calls = %v, want the page at the first unread and the one above: %v", be.historyCalls, want)
	}
	h.key("esc", "G")
	h.wantScreen("message number 300")
	h.key("U")
	h.wantScreen("message number 181")
	// From above it too: g, then U.
	h.key("g")
	h.wantScreen("message number 001")
	h.key("U")
	h.wantScreen("message number 181")

	// A key pressed while the pages are still coming stops the trip: the
	// reader's G is not undone by the page that arrives after it.
	again := fixture()
	again.convs[long] = be.convs[long]
	again.msgs[long] = be.msgs[long]
	again.inbox = append(again.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300,
		LastReadSeq: 180, LastDeliveredSeq: 300, Unread: 120, LastMessageAt: fixtureNow.Add(-time.Minute)})
	again.historyGate = make(chan struct{}) // older pages wait: the trip is under way
	h2 := newHarness(t, again, 80, 24)
	h2.key("enter")
	if !h2.root().chat.toUnread {
		t.Fatal("the trip to the first unread did not start")
	}
	h2.key("esc", "G")
	if h2.root().chat.toUnread {
		t.Fatal("a key did not stop the trip to the first unread")
	}
	close(again.historyGate)
}

func TestScrollLoadsOlderPages(t *testing.T) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.convs[long] = wire.Conversation{ConversationID: long, Type: wire.Direct}
	be.addMessages(long, []string{"dave", "alice"}, 300, fixtureNow.Add(-time.Minute), func(i int) string { return fmt.Sprintf("message number %03d", i+1) })
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300, LastMessageAt: fixtureNow.Add(-time.Minute)})
	be.historyGate = make(chan struct{})
	h := newHarness(t, be, 80, 24)
	h.key("enter") // dave: most recent
	h.wantScreen("message number 300")
	if !slices.Equal(be.historyCalls, []int64{0}) {
		t.Fatalf("history calls = %v, want only the newest page", be.historyCalls)
	}

	// Scroll up to the top of what is loaded: an older page is requested, and
	// while it loads the screen keeps answering keys.
	h.key("esc")
	m, cmd := h.m.Update(keyMsg("pgup"))
	h.m = m
	h.key("pgup") // to the top of what is loaded
	h.wantScreen("loading older messages…")
	h.key("j", "k")
	h.wantScreen("loading older messages…")
	close(be.historyGate)
	be.mu.Lock()
	be.historyGate = nil
	be.mu.Unlock()
	h.run(cmd)
	h.wantScreen("message number 251") // the page boundary, still where the reader was
	if strings.Contains(h.screen(), "loading older") {
		t.Fatalf("still loading:\n%s", h.screen())
	}
	// Keep going to the very beginning: every page once, then a marker.
	for range 40 {
		h.key("pgup")
	}
	h.wantScreen("message number 001")
	h.wantScreen("beginning of the conversation")
	if want := []int64{0, 251, 201, 151, 101, 51}; !slices.Equal(be.historyCalls, want) {
		t.Fatalf("history calls = %v, want %v", be.historyCalls, want)
	}
	if n := len(h.root().chat.msgs); n != 300 {
		t.Fatalf("%d messages loaded, want 300", n)
	}
	// Back to the bottom.
	h.key("G")
	h.wantScreen("message number 300")
}

func TestScrollKeepsPlaceWhenMessagesArrive(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 12)
	h.key("enter", "esc", "k", "k", "k")
	before := h.screen()
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: "b8", SenderID: "bob", Content: "new one", Timestamp: fixtureNow}})
	after := h.screen()
	// The history region (below the header) is unchanged; the header says 1 new.
	bl, al := strings.Split(before, "\n"), strings.Split(after, "\n")
	if !slices.Equal(bl[2:9], al[2:9]) {
		t.Fatalf("view moved:\n%s\n---\n%s", before, after)
	}
	if !strings.Contains(al[0], "↓ 1 new") {
		t.Fatalf("header lacks the new count: %q", al[0])
	}
	if be.reads[bobConv] != 7 {
		t.Fatalf("read = %d: a message off screen must not be reported read", be.reads[bobConv])
	}
	h.key("G")
	h.wantScreen("new one")
	if be.reads[bobConv] != 8 {
		t.Fatalf("read = %d after scrolling down, want 8", be.reads[bobConv])
	}
}

func TestMouseWheelScrolls(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 12)
	h.key("enter")
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if h.root().chat.offset != 3 {
		t.Fatalf("offset = %d after a wheel notch, want 3", h.root().chat.offset)
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if h.root().chat.offset != 0 {
		t.Fatalf("offset = %d, want 0", h.root().chat.offset)
	}
}

func TestInboxNavigation(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	sel := func() string { e, _ := h.root().inbox.selected(); return convTitle(e, "alice") }
	h.key("j")
	if sel() != "team" {
		t.Fatalf("after j: %s", sel())
	}
	h.key("down")
	if sel() != "carol" {
		t.Fatalf("after down: %s", sel())
	}
	h.key("j") // stays on the last
	h.key("g")
	if sel() != "bob" {
		t.Fatalf("after g: %s", sel())
	}
	h.key("G")
	if sel() != "carol" {
		t.Fatalf("after G: %s", sel())
	}
	h.key("k", "up")
	if sel() != "bob" {
		t.Fatalf("after k, up: %s", sel())
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if sel() != "team" {
		t.Fatalf("after wheel down: %s", sel())
	}
}

func TestNextUnread(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("G", "u") // from carol, the only unread is bob
	if h.root().page != pageChat || h.root().chat.conv.ConversationID != bobConv {
		t.Fatalf("u did not open bob")
	}
	h.wantScreen("ping me when you are back")
	// While writing, u is a letter; alt+n jumps.
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: "g:team", SeqNo: 4, MessageID: "t4", SenderID: "carol", Content: "retro at 4", Timestamp: fixtureNow}})
	h.typeText("u")
	if h.root().chat.compose.Value() != "u" {
		t.Fatalf("u did not go to the composer")
	}
	h.key("alt+n")
	if h.root().chat.conv.ConversationID != "g:team" {
		t.Fatalf("alt+n did not open team")
	}
	h.key("esc", "u")
	h.wantScreen("no unread conversations")
}

// From the inbox, u opens the unread conversation under the cursor rather
// than skipping it (it used to say "no unread conversations" with bob, the
// only unread one, selected).
func TestNextUnreadFromTheSelectedChat(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	if e, _ := h.root().inbox.selected(); e.ConversationID != bobConv {
		t.Fatalf("the inbox starts on %s, want bob's chat", e.ConversationID)
	}
	h.key("u")
	if h.root().page != pageChat || h.root().chat.conv.ConversationID != bobConv {
		t.Fatalf("u on the unread bob did not open it: %s", h.screen())
	}
}

func TestFinderFuzzy(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("ctrl+k")
	h.typeText("tm")
	h.wantScreen("# team")
	if strings.Contains(h.screen(), "carol (") || strings.Contains(h.screen(), "bob (2)") {
		t.Fatalf("non-matching names listed:\n%s", h.screen())
	}
	h.key("enter")
	if r := h.root(); r.page != pageChat || r.chat.conv.ConversationID != "g:team" || r.overlay != overlayNone {
		t.Fatalf("finder did not open team")
	}
	// From a chat, esc closes the finder and goes back to writing.
	h.key("ctrl+k", "esc")
	if r := h.root(); r.overlay != overlayNone || !r.chat.composing {
		t.Fatalf("esc did not close the finder back to the composer")
	}
}

func TestFuzzyScore(t *testing.T) {
	names := []string{"bobby-tables", "team", "bob", "the mob"}
	got := fuzzyFilter("bo", names)
	if len(got) != 2 || names[got[0]] != "bob" {
		t.Fatalf("bo → %v", got)
	}
	if got := fuzzyFilter("tea", names); len(got) != 1 || names[got[0]] != "team" {
		t.Fatalf("tea → %v", got)
	}
	if got := fuzzyFilter("", names); len(got) != 4 || got[0] != 0 {
		t.Fatalf("empty pattern must keep the order: %v", got)
	}
	if _, ok := fuzzyScore("xyz", "bob"); ok {
		t.Fatal("xyz matched bob")
	}
}

func TestNewDirectChat(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("n")
	h.typeText("Not Valid!")
	h.key("enter")
	h.wantScreen("may hold only")
	h.key("ctrl+u") // clear the field
	for range 10 {
		h.key("backspace")
	}
	h.typeText("alice")
	h.key("enter")
	h.wantScreen("that is you")
	for range 5 {
		h.key("backspace")
	}
	h.typeText("dave")
	h.key("enter")
	r := h.root()
	if r.page != pageChat || r.chat.conv.ConversationID != wire.DirectConversationID("alice", "dave") || r.overlay != overlayNone {
		t.Fatalf("did not open the chat with dave: page %v overlay %v conv %q", r.page, r.overlay, r.chat.conv.ConversationID)
	}
	h.wantScreen("No messages yet")
	h.wantScreen(" dave  direct")
}

func TestNewGroup(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("N")
	h.typeText("launch")
	h.key("enter") // to the members field
	h.key("enter")
	h.wantScreen("add at least one member")
	h.typeText("bob, carol")
	h.key("enter")
	r := h.root()
	if r.page != pageChat || r.chat.conv.ConversationID != "g:launch" {
		t.Fatalf("group not opened: %q", r.chat.conv.ConversationID)
	}
	h.wantScreen("launch  group · 3 members")
	if c := be.convs["g:launch"]; len(c.Participants) != 3 {
		t.Fatalf("participants = %+v", c.Participants)
	}
	h.key("esc", "m")
	h.wantScreen("Members of launch")
	h.wantScreen("alice (you)")
	h.key("esc")
	if h.root().overlay != overlayNone {
		t.Fatal("members box did not close")
	}
}

func TestLoginFlow(t *testing.T) {
	be := fixture()
	be.user = ""
	be.loginErr = wire.Errorf(wire.CodeUnauthorized, "wrong user id or password")
	h := newHarness(t, be, 80, 24)
	h.typeText("alice")
	h.key("enter") // to password
	h.typeText("short")
	h.key("enter")
	h.wantScreen("at least 8 characters")
	if len(be.logins) != 0 {
		t.Fatalf("a short password reached the server: %v", be.logins)
	}
	h.typeText("-but-long-now")
	h.key("enter")
	h.wantScreen("wrong user id or password")
	be.loginErr = nil
	h.typeText("correct horse")
	h.key("enter")
	if want := "login http://chat.test alice correct horse"; be.logins[len(be.logins)-1] != want {
		t.Fatalf("logins = %q", be.logins)
	}
	if h.root().page != pageInbox {
		t.Fatal("not on the inbox after login")
	}
	h.wantScreen("ping me when you are back")
}

// Typing the register form with Enter after each field, as people do, reaches
// the invite field instead of submitting from the password; a refusal for the
// invite keeps the password and puts the cursor on the code.
func TestRegisterWithEnterReachesTheInvite(t *testing.T) {
	be := fixture()
	be.user, be.server = "", ""
	be.loginErr = wire.Errorf(wire.CodeForbidden, "this server needs an invite code to register")
	h := newHarness(t, be, 80, 24)
	h.key("ctrl+r")
	h.typeText("localhost:9000")
	h.key("enter")
	h.typeText("zoe")
	h.key("enter")
	h.typeText("longenough")
	h.key("enter")
	if len(be.logins) != 0 {
		t.Fatalf("Enter in the password field submitted: %q", be.logins)
	}
	h.key("enter") // on the empty invite: submit (an open server needs none)
	h.wantScreen("needs an invite code")
	be.loginErr = nil
	h.typeText("INV-9")
	h.key("enter")
	if want := "register http://localhost:9000 zoe longenough INV-9"; len(be.logins) != 2 || be.logins[1] != want {
		t.Fatalf("logins = %q, want the password kept and the invite sent", be.logins)
	}
}

func TestRegisterWithInvite(t *testing.T) {
	be := fixture()
	be.user, be.server = "", ""
	h := newHarness(t, be, 80, 24)
	h.key("ctrl+r")
	h.typeText("localhost:9000")
	h.key("tab")
	h.typeText("zoe")
	h.key("tab")
	h.typeText("longenough")
	h.key("tab")
	h.typeText("INV-123")
	h.key("enter")
	if want := "register http://localhost:9000 zoe longenough INV-123"; len(be.logins) != 1 || be.logins[0] != want {
		t.Fatalf("logins = %q", be.logins)
	}
	if h.root().c.me != "zoe" {
		t.Fatalf("me = %q", h.root().c.me)
	}
}

func TestStatusLine(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	last := func() string { s := strings.Split(h.screen(), "\n"); return s[len(s)-1] }
	h.send(client.StateEvent{State: client.State{Status: client.Connected}})
	if !strings.Contains(last(), "● connected · alice") {
		t.Fatalf("status: %q", last())
	}
	h.send(client.StateEvent{State: client.State{Status: client.Reconnecting, RetryAt: fixtureNow.Add(4 * time.Second), Unsent: 1}})
	if !strings.Contains(last(), "reconnecting in 4 s with 1 unsent") {
		t.Fatalf("status: %q", last())
	}
	h.send(client.StateEvent{State: client.State{Status: client.Offline, Unsent: 2}})
	if !strings.Contains(last(), "offline with 2 unsent") {
		t.Fatalf("status: %q", last())
	}
	h.key("ctrl+r")
	if h.be.retries != 1 {
		t.Fatalf("ctrl+r: %d retries, want 1", h.be.retries)
	}
}

func TestResizeRedraws(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	for _, sz := range [][2]int{{50, 15}, {120, 40}, {30, 8}, {80, 24}} {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, h.screen(), sz[0], sz[1])
		h.wantScreen("ping me")
	}
	h.key("?")
	h.send(tea.WindowSizeMsg{Width: 40, Height: 12})
	checkFrame(t, h.screen(), 40, 12)
}

func TestHelpOpensAndCloses(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("?")
	h.wantScreen("next unread")
	h.key("x")
	if h.root().overlay != overlayNone {
		t.Fatal("help still open")
	}
	// While writing, ? is a character and f1 opens help.
	h.key("enter")
	h.typeText("?")
	if h.root().overlay != overlayNone || h.root().chat.compose.Value() != "?" {
		t.Fatal("? did not go to the composer")
	}
	h.key("f1")
	if h.root().overlay != overlayHelp {
		t.Fatal("f1 did not open help")
	}
}

func TestHostileContentIsSanitised(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter")
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: "evil", SenderID: "bob",
		Content: "red\x1b[31m\x1b]0;pwned\x07 text\rover\u202e", Timestamp: fixtureNow}})
	raw := h.m.View().Content
	if strings.Contains(raw, "\x1b[31m") || strings.Contains(raw, "pwned\x07") || strings.Contains(raw, "\r") || strings.Contains(raw, "\u202e") {
		t.Fatalf("control sequences from a message reached the terminal: %q", raw)
	}
	h.wantScreen("red[31m]0;pwned text over")
}

func TestBackgroundColourRestyles(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	dark := h.m.View().Content
	h.send(tea.BackgroundColorMsg{Color: lightBG{}})
	if h.root().c.styles.IsDark {
		t.Fatal("still dark after a light background report")
	}
	light := h.m.View().Content
	if dark == light {
		t.Fatal("colours did not change")
	}
	if ansi.Strip(dark) != ansi.Strip(light) {
		t.Fatal("text changed with the colours")
	}
}

type lightBG struct{}

func (lightBG) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

func TestEventPump(t *testing.T) {
	ch := make(chan client.Event, 1)
	ch <- client.StateEvent{State: client.State{Status: client.Connected}}
	if msg := waitEvent(ch, boundaryHold)(); msg != (client.StateEvent{State: client.State{Status: client.Connected}}) {
		t.Fatalf("got %#v", msg)
	}
	close(ch)
	if msg := waitEvent(ch, boundaryHold)(); msg != (eventsClosedMsg{}) {
		t.Fatalf("got %#v", msg)
	}
	// Update re-arms the pump after each event.
	be := fixture()
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }})
	_, cmd := m.Update(client.StateEvent{State: client.State{Status: client.Connected}})
	if cmd == nil {
		t.Fatal("no command after an event: the pump stopped")
	}
	close(be.events)
}

func TestErrorsShowInStatusLine(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.send(inboxLoadedMsg{err: errors.New("disk on fire")})
	h.wantScreen("inbox: disk on fire")
}

func TestLoggedOutGoesToLogin(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.send(client.StateEvent{State: client.State{Status: client.Offline, LoggedOut: true}})
	if h.root().page != pageLogin {
		t.Fatal("a refused token did not bring up the login screen")
	}
	h.wantScreen("log in again")
}

func TestInboxChangedReloads(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	be.mu.Lock()
	be.inbox[0].Name, be.inbox[0].LastMessageBody = "", "renamed preview"
	be.mu.Unlock()
	h.send(client.InboxEvent{})
	h.wantScreen("renamed preview")
}

// TestOfflineInboxSaysSo: an inbox the server answered from its offline copy
// (client.InboxEvent.Offline) is reloaded from the cache and the status line
// says it may be behind.
func TestOfflineInboxSaysSo(t *testing.T) {
	h := newHarness(t, fixture(), 120, 24)
	h.send(client.InboxEvent{Offline: true})
	h.wantScreen("inbox is this device's copy")
}

func TestPasteWhileReadingStartsWriting(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter", "esc")
	h.send(tea.PasteMsg{Content: "pasted\ntext"})
	if r := h.root(); !r.chat.composing || r.chat.compose.Value() != "pasted\ntext" {
		t.Fatalf("paste lost: composing=%v value=%q", r.chat.composing, r.chat.compose.Value())
	}
}

func TestUnreadMarker(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter") // bob: read up to 5, 6 and 7 unread
	lines := strings.Split(h.screen(), "\n")
	for i, l := range lines {
		if strings.Contains(l, " new ──") {
			if !strings.Contains(lines[i+1], "looking now") {
				t.Fatalf("the new marker is not above the first unread message:\n%s", h.screen())
			}
			return
		}
	}
	t.Fatalf("no new marker:\n%s", h.screen())
}

func TestOverlayReturnsToTheModeItCameFrom(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter", "esc", "m") // reading, then members
	h.key("q")                 // closes the box
	if r := h.root(); r.overlay != overlayNone || r.chat.composing {
		t.Fatalf("after members from reading: overlay %v composing %v", r.overlay, r.chat.composing)
	}
	h.key("i", "ctrl+k", "esc") // writing, then the finder
	if r := h.root(); r.overlay != overlayNone || !r.chat.composing {
		t.Fatalf("after the finder from writing: overlay %v composing %v", r.overlay, r.chat.composing)
	}
}

func TestMouseClickOpensConversation(t *testing.T) {
	h := newHarness(t, fixture(), 120, 30)
	h.send(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 3}) // inbox rows: 1-2 bob, 3-4 team
	if r := h.root(); r.page != pageChat || r.chat.conv.ConversationID != "g:team" {
		t.Fatalf("click did not open team: %q", r.chat.conv.ConversationID)
	}
	// In the sidebar, one row per conversation: row 1 is bob.
	h.send(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 1})
	if r := h.root(); r.chat.conv.ConversationID != bobConv {
		t.Fatalf("sidebar click did not open bob: %q", r.chat.conv.ConversationID)
	}
	h.wantScreen("ping me when you are back")
	// Narrow again: no sidebar, the chat takes the width.
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	checkFrame(t, h.screen(), 80, 24)
	if strings.Contains(h.screen(), "│ ") {
		t.Fatalf("sidebar drawn at 80 columns:\n%s", h.screen())
	}
}

func TestFinderStartsDirectChatWithUnknownName(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("ctrl+k")
	h.typeText("zed")
	h.wantScreen("enter: message zed")
	h.key("enter")
	if r := h.root(); r.page != pageChat || r.chat.conv.ConversationID != wire.DirectConversationID("alice", "zed") || r.overlay != overlayNone {
		t.Fatalf("no chat with zed: page %v overlay %v conv %q", r.page, r.overlay, r.chat.conv.ConversationID)
	}
}

func TestNothingReadWhileTerminalUnfocused(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("g", "j", "j", "enter") // carol
	h.send(tea.BlurMsg{})
	h.deliver(wire.Message{ConversationID: carolConv, SeqNo: 2, MessageID: "c2", SenderID: "carol", Content: "are you there?", Timestamp: fixtureNow})
	h.wantScreen("are you there?")
	if be.reads[carolConv] > 1 { // 1 was read already: nothing to report
		t.Fatalf("read = %d while the terminal was unfocused, want at most 1", be.reads[carolConv])
	}
	h.send(tea.FocusMsg{})
	if be.reads[carolConv] != 2 {
		t.Fatalf("read = %d after focus came back, want 2", be.reads[carolConv])
	}
}

func TestDraftsStayWithTheirConversation(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter") // bob
	h.typeText("half a thought")
	h.key("ctrl+k")
	h.typeText("team")
	h.key("enter")
	if v := h.root().chat.compose.Value(); v != "" {
		t.Fatalf("bob's draft leaked into team: %q", v)
	}
	h.key("ctrl+k")
	h.typeText("bob")
	h.key("enter")
	if v := h.root().chat.compose.Value(); v != "half a thought" {
		t.Fatalf("draft for bob = %q", v)
	}
}

func TestCtrlCClearsTheComposerFirst(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.typeText("oops")
	m, cmd := h.m.Update(keyMsg("ctrl+c"))
	h.m = m
	if h.root().chat.compose.Value() != "" {
		t.Fatal("ctrl+c did not clear the composer")
	}
	if cmd != nil {
		if _, quit := cmd().(tea.QuitMsg); quit {
			t.Fatal("ctrl+c with text quit")
		}
	}
	_, cmd = h.m.Update(keyMsg("ctrl+c"))
	if cmd == nil {
		t.Fatal("second ctrl+c did nothing")
	}
	if _, quit := cmd().(tea.QuitMsg); !quit {
		t.Fatal("second ctrl+c did not quit")
	}
}

func TestStaleHistorySaysSo(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.send(historyMsg{conv: bobConv, page: Page{Messages: nil, Stale: true}, gen: h.root().chat.windowGen})
	if !strings.Contains(strings.Split(h.screen(), "\n")[0], "offline: from the cache") {
		t.Fatalf("header does not say the page is from the cache:\n%s", h.screen())
	}
	// Back online: the newest page is asked for again.
	h.send(client.StateEvent{State: client.State{Status: client.Connected}})
	if strings.Contains(h.screen(), "offline: from the cache") {
		t.Fatalf("still marked as from the cache after reconnecting:\n%s", h.screen())
	}
}

func TestAddMembersToGroup(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("j", "enter", "esc", "m") // team, reading, members
	h.wantScreen("a adds")
	h.key("a")
	h.typeText("nobody")
	h.key("enter")
	h.wantScreen("no user nobody")
	for range 6 {
		h.key("backspace")
	}
	h.typeText("dave, erin")
	h.key("enter")
	h.wantScreen("erin")
	h.wantScreen("5 members")
	h.key("q")
	h.wantScreen("group · 5 members") // the chat header follows
}

// Keys typed ahead of the screen land where the keys before them lead: opening
// a chat, closing a box and picking in the finder take effect in the key's own
// Update, not in a command's message that would queue behind the next keys.
func TestKeysTypedAheadFollowTheScreens(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	composer := func(what, conv, want string) {
		t.Helper()
		r := h.root()
		if r.overlay != overlayNone || r.page != pageChat || r.chat.conv.ConversationID != conv ||
			!r.chat.composing || r.chat.compose.Value() != want {
			t.Fatalf("%s: overlay %v page %v conv %q composing %v composer %q, want writing %q in %s:\n%s",
				what, r.overlay, r.page, r.chat.conv.ConversationID, r.chat.composing, r.chat.compose.Value(),
				want, conv, h.screen())
		}
	}
	h.typeAhead("enter", "h", "i") // bob's chat from the inbox, then write
	composer("inbox enter", bobConv, "hi")

	h.key("esc", "esc", "j", "enter", "esc") // team, reading
	h.typeAhead("m", "q", "i", "y", "o")     // the members box, closed, then write
	composer("members box closed", "g:team", "yo")

	h.typeAhead("ctrl+k", "b", "o", "b", "enter", "!") // the finder, to bob
	composer("finder pick", bobConv, "hi!")

	h.typeAhead("ctrl+k", "esc", "?") // the finder, closed: back to writing
	composer("finder closed", bobConv, "hi!?")
}

// The members box loads when it opens and again after an add; the loads race,
// and the first one's answer, older, must not hide the newcomer.
func TestMembersBoxKeepsTheLatestLoad(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("j", "enter", "esc") // team, reading
	var cmd tea.Cmd
	h.m, cmd = h.m.Update(keyMsg("m"))
	stale := runCmds([]tea.Cmd{cmd}) // asked before the add, answered after it
	if len(stale) != 1 {
		t.Fatalf("opening the box: %d messages, want its one load", len(stale))
	}
	if _, ok := stale[0].(membersLoadedMsg); !ok {
		t.Fatalf("opening the box: %T, want membersLoadedMsg", stale[0])
	}
	h.key("a")
	h.typeText("dave")
	h.key("enter")
	h.wantScreen("4 members · a adds")
	h.feed(stale, 0)
	h.wantScreen("4 members · a adds")
	h.wantScreen("dave")
}

func TestCatchUpOfOlderMessagesIsNotNew(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 12)
	h.key("enter", "esc", "k", "k")
	var before string
	// A message older than the newest arrives (a sync filling a gap): not "new",
	// and the view does not move.
	be.mu.Lock()
	be.msgs[bobConv] = slices.DeleteFunc(be.msgs[bobConv], func(m wire.Message) bool { return m.SeqNo == 3 })
	be.mu.Unlock()
	rm := h.root()
	rm.chat.msgs = slices.DeleteFunc(slices.Clone(rm.chat.msgs), func(m wire.Message) bool { return m.SeqNo == 3 })
	rm.chat.render()
	h.m = rm
	before = h.screen()
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 3, MessageID: "b3", SenderID: "bob", Content: "great. see you there", Timestamp: fixtureNow.Add(-26 * time.Hour)}})
	if header := strings.Split(h.screen(), "\n")[0]; strings.Contains(header, " new ") {
		t.Fatalf("an older message counted as new: %q", header)
	}
	if got := strings.Split(h.screen(), "\n")[2:8]; !slices.Equal(got, strings.Split(before, "\n")[2:8]) {
		t.Fatalf("view moved:\n%s\n---\n%s", before, h.screen())
	}
}

// The chat header says who is around: the peer online (or when last seen),
// "is typing…" while a typing hint is fresh, gone when their message comes;
// typing in the composer tells the others.
func TestTypingAndPresenceInTheHeader(t *testing.T) {
	be := fixture()
	be.presence = map[string][]wire.MemberPresence{bobConv: {{UserID: "bob", Online: true}}}
	h := newHarness(t, be, 100, 24)
	h.key("enter") // bob
	h.wantScreen("direct  online")

	h.send(client.TypingEvent{ConversationID: bobConv, UserID: "bob", At: fixtureNow})
	h.wantScreen("bob is typing…")
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: "b8", SenderID: "bob", Content: "here it is", Timestamp: fixtureNow}})
	if strings.Contains(h.screen(), "is typing") {
		t.Fatalf("still typing after bob's message arrived:\n%s", h.screen())
	}
	h.send(client.TypingEvent{ConversationID: bobConv, UserID: "bob", At: fixtureNow.Add(-client.TypingShownFor - time.Second)})
	if strings.Contains(h.screen(), "is typing") {
		t.Fatalf("a stale typing hint is shown:\n%s", h.screen())
	}
	h.send(client.TypingEvent{ConversationID: "g:team", UserID: "carol", At: fixtureNow})
	if strings.Contains(h.screen(), "carol is typing") {
		t.Fatalf("typing in another conversation shows here:\n%s", h.screen())
	}

	h.typeText("ok")
	if len(be.typing) == 0 || be.typing[0] != bobConv {
		t.Fatalf("typing in the composer told the backend %v, want %s", be.typing, bobConv)
	}

	// Offline: when last seen, in the header.
	be.presence[bobConv] = []wire.MemberPresence{{UserID: "bob", LastSeen: fixtureNow.Add(-2 * time.Hour)}}
	h.send(presenceTickMsg{conv: bobConv})
	h.wantScreen("last seen " + fixtureNow.Add(-2*time.Hour).Format("15:04"))
}

// A restored server: the session dropped bob's last message from the cache
// and says so once; the open chat no longer shows it, and the status line
// tells why.
func TestRestoredServerReloadsTheChat(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter")
	h.wantScreen("ping me when you are back")
	be.mu.Lock()
	be.msgs[bobConv] = be.msgs[bobConv][:6]
	be.mu.Unlock()
	h.send(client.RestoredEvent{StoreChanged: true, Conversations: []string{bobConv}, Lost: 1})
	if strings.Contains(h.screen(), "ping me when you are back") {
		t.Fatalf("the lost message is still on screen:\n%s", h.screen())
	}
	h.wantScreen("first thing: the error codes")
	h.wantScreen("restored from a backup")
}

// Opening a chat at its first unread reports read only what the screen
// shows: the boundary moves to the newest message on screen, and on with the
// reader as they scroll down, never past what was shown.
func TestReadOnlyWhatWasOnScreen(t *testing.T) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.convs[long] = wire.Conversation{ConversationID: long, Type: wire.Direct}
	be.addMessages(long, []string{"dave"}, 300, fixtureNow.Add(-time.Minute), func(i int) string { return fmt.Sprintf("message number %03d", i+1) })
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300,
		LastReadSeq: 180, LastDeliveredSeq: 300, Unread: 120, LastMessageAt: fixtureNow.Add(-time.Minute)})
	h := newHarness(t, be, 80, 24)
	h.key("enter") // dave: most recent
	h.wantScreen("message number 181")
	newest := newestOnScreen(h, "message number ")
	if got := be.reads[long]; got != newest {
		t.Fatalf("read boundary = %d after opening at the first unread, want %d (the newest message on screen)\n%s", got, newest, h.screen())
	}
	if newest >= 300 || newest < 181 {
		t.Fatalf("newest on screen = %d: the screen does not show the first unread", newest)
	}
	// The inbox counts what is still unread, not zero.
	if e, _ := h.root().inbox.entry(long); e.Unread != 300-newest {
		t.Fatalf("inbox unread = %d after one screen, want %d", e.Unread, 300-newest)
	}

	// Scrolling down through the unread moves the boundary with the screen.
	h.key("esc", "ctrl+d")
	further := newestOnScreen(h, "message number ")
	if further <= newest || be.reads[long] != further {
		t.Fatalf("after scrolling down: read = %d, newest on screen %d (before %d)", be.reads[long], further, newest)
	}
	// Scrolling back up takes nothing back.
	h.key("ctrl+u", "ctrl+u")
	if be.reads[long] != further {
		t.Fatalf("read = %d after scrolling up, want it kept at %d", be.reads[long], further)
	}
	h.key("G")
	if be.reads[long] != 300 {
		t.Fatalf("read = %d at the bottom, want 300", be.reads[long])
	}
}

// newestOnScreen is the highest message number drawn on screen.
func newestOnScreen(h *harness, prefix string) int64 {
	h.t.Helper()
	var n int64
	for _, l := range strings.Split(h.screen(), "\n") {
		i := strings.Index(l, prefix)
		if i < 0 {
			continue
		}
		var v int64
		if _, err := fmt.Sscanf(l[i+len(prefix):], "%d", &v); err == nil {
			n = max(n, v)
		}
	}
	return n
}

// A peer's boundary moving (with every message in a direct chat, every ack
// in a group) redraws the ticks on screen, not the history: ticks of stored
// messages are drawn by View.
func TestBoundaryMoveDrawsOnlyTheTicksOnScreen(t *testing.T) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.convs[long] = wire.Conversation{ConversationID: long, Type: wire.Direct}
	be.addMessages(long, []string{"alice"}, 300, fixtureNow.Add(-time.Minute), func(i int) string { return fmt.Sprintf("mine %03d", i+1) })
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300,
		LastReadSeq: 300, LastDeliveredSeq: 300, LastMessageAt: fixtureNow.Add(-time.Minute)})
	h := newHarness(t, be, 80, 24)
	h.key("enter") // dave: most recent
	h.wantTick("mine 300", "✓", false)
	redraws := h.root().chat.redraws
	h.send(client.StatusEvent{ConversationID: long, Status: wire.MemberStatus{UserID: "dave", LastDeliveredSeq: 300, LastReadSeq: 295}})
	h.wantTick("mine 295", "✓✓", true)
	h.wantTick("mine 296", "✓✓", false)
	h.send(client.StatusEvent{ConversationID: long, Status: wire.MemberStatus{UserID: "dave", LastDeliveredSeq: 300, LastReadSeq: 300}})
	h.wantTick("mine 300", "✓✓", true)
	if got := h.root().chat.redraws; got != redraws {
		t.Fatalf("the history was drawn again %d times for two boundary moves", got-redraws)
	}
}

// A chat off screen (the inbox in its place) takes messages into its data
// and draws nothing until it shows again.
func TestHiddenChatDrawsNothing(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter", "esc", "esc") // bob, then back to the inbox
	if h.root().page != pageInbox {
		t.Fatalf("not on the inbox: %v", h.root().page)
	}
	redraws, lines := h.root().chat.redraws, len(h.root().chat.lines)
	h.deliver(wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: "b8", SenderID: "bob", Content: "while you were away", Timestamp: fixtureNow})
	c := h.root().chat
	if c.redraws != redraws || len(c.lines) != lines || !c.dirty {
		t.Fatalf("a hidden chat drew: redraws %d → %d, lines %d → %d, dirty %v", redraws, c.redraws, lines, len(c.lines), c.dirty)
	}
	h.key("g", "enter") // bob, the newest conversation
	h.wantScreen("while you were away")
}

// The composer shows the size as the limit nears, and keeps a text over it
// with the reason instead of sending what the server would refuse.
func TestOverLongTextStaysInTheComposer(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	h.send(tea.PasteMsg{Content: strings.Repeat("a", 13000)})
	h.wantScreen("13000 / 16384 bytes")
	h.send(tea.PasteMsg{Content: strings.Repeat("b", 4000)})
	h.wantScreen("17000 / 16384 bytes")
	h.key("enter")
	if len(be.sends) != 0 {
		t.Fatalf("sent %d messages over the limit", len(be.sends))
	}
	if got := len(h.root().chat.compose.Value()); got != 17000 {
		t.Fatalf("composer holds %d bytes after enter, want the 17000 kept", got)
	}
	h.wantScreen("the limit is 16384")
}

// quits reports whether cmd (from one Update) ends the program.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, q := cmd().(tea.QuitMsg)
	return q
}

func TestCtrlCAsksBeforeDroppingDrafts(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.typeText("half a thought")
	h.key("esc", "esc") // out of the composer, back to the inbox: the draft stays
	if h.root().page != pageInbox {
		t.Fatalf("page = %v, want the inbox", h.root().page)
	}
	m, cmd := h.m.Update(keyMsg("ctrl+c"))
	h.m = m
	if quits(cmd) {
		t.Fatal("ctrl+c in the inbox quit with a draft unsent")
	}
	h.run(cmd)
	h.wantScreen("1 draft unsent — ctrl+c again to quit")
	// Any other key answers "no": the next ctrl+c asks again.
	h.key("j")
	m, cmd = h.m.Update(keyMsg("ctrl+c"))
	h.m = m
	if quits(cmd) {
		t.Fatal("ctrl+c after another key quit without asking again")
	}
	m, cmd = h.m.Update(keyMsg("ctrl+c"))
	h.m = m
	if !quits(cmd) {
		t.Fatal("ctrl+c twice did not quit")
	}
}

func TestCtrlCQuitsAtOnceWithNothingUnsent(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	if _, cmd := h.m.Update(keyMsg("ctrl+c")); !quits(cmd) {
		t.Fatal("ctrl+c with nothing unsent did not quit")
	}
}

// The unread total beside "Conversations" (and in the window title) leaves
// muted chats out and caps as the rows do: never "13001 unread" beside rows
// of "1000+".
func TestUnreadTotalSkipsMutedAndCaps(t *testing.T) {
	be := fixture()
	team := be.inbox[2].ConversationID
	be.inbox[0].Unread = 3      // carol
	be.inbox[2].Unread = 12_996 // team
	h := newHarness(t, be, 80, 24)
	h.send(mutesMsg{muted: map[string]bool{team: true}})
	h.wantScreen("Conversations  5 unread") // carol 3, bob 2
	if got := h.root().View().WindowTitle; got != "chat · alice (5)" {
		t.Fatalf("window title %q", got)
	}
	h.send(mutesMsg{muted: map[string]bool{}})
	h.wantScreen("Conversations  1000+ unread")
	if s := h.screen(); strings.Contains(s, "13001") {
		t.Fatalf("the total passes the rows' cap:\n%s", s)
	}
}

// Disconnected, the header says so rather than what presence said before the
// connection dropped ("online"); connected again, presence shows again.
func TestPresenceIsHonestWhileDisconnected(t *testing.T) {
	be := fixture()
	be.presence = map[string][]wire.MemberPresence{bobConv: {{UserID: "bob", Online: true}}}
	h := newHarness(t, be, 100, 24)
	h.key("enter") // bob
	h.wantScreen("direct  online")
	h.send(client.StateEvent{State: client.State{Status: client.Reconnecting, RetryAt: fixtureNow.Add(5 * time.Second)}})
	if strings.Contains(h.screen(), "direct  online") {
		t.Fatalf("the header claims bob is online while we are disconnected:\n%s", h.screen())
	}
	h.wantScreen("direct  you are offline")
	h.send(client.StateEvent{State: client.State{Status: client.Connected}})
	h.wantScreen("direct  online")
}

// A hint in the status line goes with the next key: "press D again" after
// the selection moved on, "ctrl+c again to quit" after the answer was no.
func TestHintsEndWithTheNextKey(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter", "esc", "s", "D") // bob, reading; b7 selected, first D
	h.wantScreen("press D again")
	h.key("up")
	if strings.Contains(h.screen(), "press D again") {
		t.Fatalf("the delete hint outlived the selection moving:\n%s", h.screen())
	}
	h.key("i")
	h.typeText("draft")
	h.key("esc")
	m, cmd := h.m.Update(keyMsg("ctrl+c"))
	h.m = m
	h.run(cmd)
	h.wantScreen("ctrl+c again to quit")
	h.key("k")
	if strings.Contains(h.screen(), "again to quit") {
		t.Fatalf("the quit question stayed after another key answered it:\n%s", h.screen())
	}
}
