package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

const mentionsTeam = "g:team" // the fixture's group

// Mentions makes the fake a MentionLister: the messages naming alice, newest
// first, as the cache would list them.
func (f *fakeBackend) Mentions(_ context.Context, limit int) ([]wire.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []wire.Message
	for _, msgs := range f.msgs {
		for _, m := range msgs {
			if wire.MentionsUser(m.Mentions, m.SenderID, f.user) {
				out = append(out, m)
			}
		}
	}
	for i := 1; i < len(out); i++ { // newest first
		for j := i; j > 0 && out[j].Timestamp.After(out[j-1].Timestamp); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out[:min(len(out), limit)], nil
}

// A mention, or a highlight word, rings in a muted chat and says so; the
// inbox row and the window title count it; anything else there stays quiet.
func TestMentionRingsInAMutedChat(t *testing.T) {
	be := fixture()
	h := newHarnessWith(t, be, 100, 24, func(o *Options) { o.HighlightWords = []string{"Launch"}; o.Notify = NotifyOSC9 })
	var raw []string
	h.before = func(msg tea.Msg) []tea.Msg {
		if r, ok := msg.(tea.RawMsg); ok {
			raw = append(raw, r.Msg.(string))
		}
		return nil
	}
	rearm := func() {
		m := h.m.(Model)
		m.lastNotify = time.Time{}
		h.m = m
	}
	h.key("j", "enter", "esc", "M", "esc") // the team group, reading, mute, back to the inbox
	if !be.muted[mentionsTeam] {
		t.Fatalf("the group was not muted: %v", be.muted)
	}
	h.send(tea.BlurMsg{})
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: mentionsTeam, SeqNo: 50, MessageID: "q1", SenderID: "bob", Content: "quiet", Timestamp: fixtureNow}})
	if len(raw) != 0 {
		t.Fatalf("a muted group rang for a plain message: %q", raw)
	}
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: mentionsTeam, SeqNo: 51, MessageID: "q2", SenderID: "bob", Content: "@alice look", Timestamp: fixtureNow,
		Mentions: []string{"alice"}}})
	if len(raw) != 1 || !strings.HasPrefix(raw[0], "\x1b]9;bob mentioned you: ") {
		t.Fatalf("a mention in a muted group: %q", raw)
	}
	rearm()
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: mentionsTeam, SeqNo: 52, MessageID: "q3", SenderID: "carol", Content: "the launch slipped", Timestamp: fixtureNow}})
	if len(raw) != 2 || !strings.Contains(raw[1], "carol mentioned you") {
		t.Fatalf("a highlight word in a muted group: %q", raw)
	}
	h.wantScreen("@2(3)")
	if title := h.m.(Model).View().WindowTitle; !strings.HasSuffix(title, " @2") {
		t.Fatalf("window title %q does not count the mentions", title)
	}
	if highlighted("relaunch", []string{"launch"}) || !highlighted("Launch!", []string{"launch"}) {
		t.Fatal("highlight words match whole words, case folded")
	}
}

// @ opens the mentions view; enter shows the message in its chat.
func TestMentionsView(t *testing.T) {
	be := fixture()
	be.msgs[mentionsTeam] = append(be.msgs[mentionsTeam], wire.Message{ConversationID: mentionsTeam, SeqNo: 4, MessageID: "t4", SenderID: "carol",
		Content: "@alice the deploy notes", Timestamp: fixtureNow.Add(-time.Minute), Mentions: []string{"alice"}})
	h := newHarness(t, be, 100, 24)
	h.key("@")
	h.wantScreen("Mentions of you")
	h.wantScreen("@alice the deploy notes")
	h.key("enter")
	if m := h.root(); m.overlay != overlayNone || m.page != pageChat || m.chat.conv.ConversationID != mentionsTeam {
		t.Fatalf("enter did not open the group: page %v overlay %v conv %q", m.page, m.overlay, m.chat.conv.ConversationID)
	}
}

// Tab after "@" completes a member's id from the open chat, tab again the
// next that fits; a name nobody has is left alone.
func TestMentionCompletion(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 24)
	h.key("j", "enter") // the team group, writing
	h.typeText("hi @")
	h.key("tab")
	if v := h.root().chat.compose.Value(); v != "hi @bob " {
		t.Fatalf("first tab: %q", v)
	}
	h.key("tab")
	if v := h.root().chat.compose.Value(); v != "hi @carol " {
		t.Fatalf("second tab: %q", v)
	}
	h.typeText("and @a")
	h.key("tab")
	if v := h.root().chat.compose.Value(); v != "hi @carol and @all " {
		t.Fatalf("@a completes to all (alice is you): %q", v)
	}
	h.typeText("@zed")
	h.key("tab")
	if v := h.root().chat.compose.Value(); !strings.HasSuffix(v, "@zed") {
		t.Fatalf("an unknown name changed: %q", v)
	}
}

// Tab after "@" and the start of a member's display name, or of a word of
// it, completes to their id (a mention is by id); tab again cycles through
// ids and names that fit alike.
func TestMentionCompletionByDisplayName(t *testing.T) {
	be := namedFixture()
	be.profiles["carol"] = wire.Profile{UserID: "carol", DisplayName: "Carol Dylan"}
	h := newHarness(t, be, 100, 24)
	h.key("j", "enter") // the team group, writing
	h.typeText("hi @Dyl")
	h.key("tab")
	if v := h.root().chat.compose.Value(); v != "hi @bob " {
		t.Fatalf("@Dyl: %q, want bob by his name's second word", v)
	}
	h.key("tab")
	if v := h.root().chat.compose.Value(); v != "hi @carol " {
		t.Fatalf("@Dyl, second tab: %q, want carol", v)
	}
	h.typeText("and @car")
	h.key("tab")
	if v := h.root().chat.compose.Value(); v != "hi @carol and @carol " {
		t.Fatalf("@car: %q, want carol by her id", v)
	}
}
