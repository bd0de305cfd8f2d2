package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// eventsFixture is the fixture with a group chat that has seen every kind of
// event: a reply, reactions (one of them mine), an edit, a delete, an
// attachment, and the event rows themselves, which show only through the
// messages they changed.
func eventsFixture() *fakeBackend {
	f := fixture()
	team := "g:team"
	at := fixtureNow.Add(-40 * time.Minute)
	msgs := f.msgs[team]
	msgs[0].Reactions = map[string]string{"bob": "👍", "alice": "👍", "carol": "🎉"}
	msgs[0].UpdatedSeq = 9
	msgs = append(msgs,
		wire.Message{ConversationID: team, SeqNo: 4, MessageID: "t4", SenderID: "bob", Content: "can we make it 11?", ReplyTo: 1, Timestamp: at},
		wire.Message{ConversationID: team, SeqNo: 5, MessageID: "t5", SenderID: "carol", Content: "", Deleted: true, UpdatedSeq: 8, Timestamp: at.Add(time.Minute)},
		wire.Message{ConversationID: team, SeqNo: 6, MessageID: "t6", SenderID: "alice", Content: "11 works, moved it", Edited: true, UpdatedSeq: 7, Timestamp: at.Add(2 * time.Minute)},
		wire.Message{ConversationID: team, SeqNo: 7, MessageID: "t7", SenderID: "alice", Kind: wire.KindEdit, TargetSeq: 6, Content: "11 works, moved it", Timestamp: at.Add(3 * time.Minute)},
		wire.Message{ConversationID: team, SeqNo: 8, MessageID: "t8", SenderID: "carol", Kind: wire.KindDelete, TargetSeq: 5, Timestamp: at.Add(3 * time.Minute)},
		wire.Message{ConversationID: team, SeqNo: 9, MessageID: "t9", SenderID: "carol", Kind: wire.KindReaction, TargetSeq: 1, Content: "🎉", Timestamp: at.Add(4 * time.Minute)},
		wire.Message{ConversationID: team, SeqNo: 10, MessageID: "t10", SenderID: "bob", Attachment: "media/bob/0123456789abcdef", Timestamp: at.Add(5 * time.Minute),
			AttachmentInfo: &wire.AttachmentInfo{Name: "slides.pdf", Type: "application/pdf", Size: 2_400_000}},
	)
	f.msgs[team] = msgs
	for i := range f.inbox {
		if f.inbox[i].ConversationID == team {
			f.inbox[i].LastSeq, f.inbox[i].LastReadSeq, f.inbox[i].LastDeliveredSeq = 10, 10, 10
		}
	}
	return f
}

func TestGoldenChatEvents(t *testing.T) {
	h := newHarness(t, eventsFixture(), 80, 24)
	h.key("j", "enter")
	screen := h.screen()
	checkFrame(t, screen, 80, 24)
	for _, want := range []string{"↪ carol: standup moved to 10:30", "👍 2", "🎉 1", "message deleted", "(edited)", "📎 slides.pdf · application/pdf · 2.4 MB"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Count(screen, "11 works, moved it") != 1 {
		t.Errorf("the edit event shows as a message of its own:\n%s", screen)
	}
	golden(t, "chat_events", screen)
}

// s selects the newest message and ↑ moves up; r, + and e open the composer
// for a reply, a reaction and an edit of that message; D twice deletes; ↑ in
// an empty composer edits my newest message. Each goes to the backend as the
// message or event it is.
func TestMessageActionKeys(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter", "esc") // bob, reading
	last := func() wire.Message {
		t.Helper()
		be.mu.Lock()
		defer be.mu.Unlock()
		if len(be.sends) == 0 {
			t.Fatal("nothing sent")
		}
		return be.sends[len(be.sends)-1]
	}
	h.key("s", "up") // b7, then b6
	h.wantScreen("▶")
	h.key("r")
	h.wantScreen("replying to bob: looking now")
	h.typeText("on it")
	h.key("enter")
	if m := last(); m.ReplyTo != 6 || m.Content != "on it" || m.Kind != "" {
		t.Fatalf("reply sent as %+v", m)
	}
	h.key("esc", "s", "+") // b7
	h.typeText("👍")
	h.key("enter")
	if m := last(); m.Kind != wire.KindReaction || m.TargetSeq != 7 || m.Content != "👍" {
		t.Fatalf("reaction sent as %+v", m)
	}
	// Reacting started in reading mode ends there: the next k scrolls, not types.
	if h.root().chat.composing {
		t.Fatal("after a reaction from reading mode the composer has the keys")
	}
	// Before anything is typed, 1–6 pick a reaction at once; after, a digit is text.
	h.key("s", "up", "+")
	h.wantScreen("1 👍  2 ❤")
	h.key("2")
	if m := last(); m.Kind != wire.KindReaction || m.TargetSeq != 6 || m.Content != "❤" {
		t.Fatalf("quick reaction 2 sent as %+v", m)
	}
	if h.root().chat.action != actMessage || h.root().chat.compose.Value() != "" {
		t.Fatalf("after a quick reaction: action %v, composer %q", h.root().chat.action, h.root().chat.compose.Value())
	}
	if h.root().chat.composing {
		t.Fatal("after a quick reaction from reading mode the composer has the keys")
	}
	sends := len(be.sends)
	h.key("s", "+")
	h.typeText("x3")
	if len(be.sends) != sends || h.root().chat.compose.Value() != "x3" {
		t.Fatalf("a digit after text: %d sends, composer %q", len(be.sends)-sends, h.root().chat.compose.Value())
	}
	h.key("esc") // cancels the reaction; its text stays as a plain draft
	if h.root().chat.action != actMessage {
		t.Fatal("esc did not cancel the reaction")
	}
	if h.root().chat.composing {
		t.Fatal("esc on a reaction begun in reading mode stayed in the composer")
	}
	h.key("i", "ctrl+c", "esc")
	h.key("e") // my newest: b5
	if got := h.root().chat.compose.Value(); !strings.HasPrefix(got, "it needs a second pair") {
		t.Fatalf("e put %q in the composer", got)
	}
	h.key("ctrl+c") // clears the composer
	h.typeText("fixed text")
	h.key("enter")
	if m := last(); m.Kind != wire.KindEdit || m.TargetSeq != 5 || m.Content != "fixed text" {
		t.Fatalf("edit sent as %+v", m)
	}
	if h.root().chat.composing {
		t.Fatal("after an edit begun in reading mode the composer has the keys")
	}
	h.key("i", "up") // an empty composer: edit my newest again
	if h.root().chat.action != actEdit || h.root().chat.target.SeqNo != 5 {
		t.Fatalf("↑ in an empty composer: action %v on %d", h.root().chat.action, h.root().chat.target.SeqNo)
	}
	h.key("esc") // cancels the edit, and its text
	if h.root().chat.action != actMessage || h.root().chat.compose.Value() != "" {
		t.Fatal("esc did not cancel the edit")
	}
	n := len(be.sends)
	h.key("esc", "s", "up", "D")
	h.wantScreen("press D again")
	if len(be.sends) != n {
		t.Fatal("one D deleted")
	}
	h.key("D")
	if m := last(); m.Kind != wire.KindDelete || m.TargetSeq != 6 {
		t.Fatalf("delete sent as %+v", m)
	}
	// Nothing of these shows as a pending message.
	if p := h.root().chat.pending; len(p) != 1 || p[0].Content != "on it" {
		t.Fatalf("pending lines: %+v", p)
	}
}

// A message changed by events elsewhere (client.ChangedEvent) is drawn anew.
func TestChangedMessageRedrawn(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	bob := wire.DirectConversationID("alice", "bob")
	h.send(client.ChangedEvent{Message: wire.Message{ConversationID: bob, SeqNo: 7, MessageID: "b7", SenderID: "bob",
		Content: "ping me when you are back!", Edited: true, Reactions: map[string]string{"alice": "❤"}, UpdatedSeq: 9,
		Timestamp: fixtureNow.Add(-5 * time.Minute)}})
	h.wantScreen("ping me when you are back! (edited)")
	h.wantScreen("[❤ 1]")
}

// o opens the newest attachment (or the selected one) outside the terminal, w
// saves it; "/attach PATH TEXT" in the composer uploads a file and sends it.
func TestAttachmentKeys(t *testing.T) {
	be := eventsFixture()
	var opened []string
	h := newHarnessWith(t, be, 80, 24, func(o *Options) {
		o.OpenURL = func(url string) error { opened = append(opened, url); return nil }
	})
	h.key("j", "enter", "esc") // team, reading
	h.key("o")
	if len(opened) != 1 || opened[0] != "http://files.test/media/bob/0123456789abcdef" {
		t.Fatalf("o opened %q", opened)
	}
	h.wantScreen("opened slides.pdf")
	h.key("w")
	h.wantScreen("saved to /tmp/downloads/slides.pdf")
	h.key("s") // the newest message has it too; a message without one says so
	h.key("up")
	h.key("o")
	h.wantScreen("no attachment here")
	h.key("esc", "i")
	h.typeText(`/attach "/tmp/my notes.txt" for the record`)
	h.key("enter")
	be.mu.Lock()
	last := be.sends[len(be.sends)-1]
	be.mu.Unlock()
	if last.AttachmentInfo == nil || last.AttachmentInfo.Name != "my notes.txt" || last.Content != "for the record" {
		t.Fatalf("/attach sent %+v", last)
	}
}

func TestAttachCommand(t *testing.T) {
	for _, tc := range []struct{ in, path, rest string }{
		{"/attach a.pdf", "a.pdf", ""},
		{"/attach ~/x/a.pdf the plan", "~/x/a.pdf", "the plan"},
		{`/attach "/tmp/with space.txt" hi`, "/tmp/with space.txt", "hi"},
	} {
		path, rest, ok := attachCommand(tc.in)
		if !ok || path != tc.path || rest != tc.rest {
			t.Errorf("attachCommand(%q) = %q, %q, %v", tc.in, path, rest, ok)
		}
	}
	for _, in := range []string{"/attach", "/attach ", "attach a.pdf", "/attachment a"} {
		if _, _, ok := attachCommand(in); ok {
			t.Errorf("attachCommand(%q) took it for a command", in)
		}
	}
}

// p goes to the message a reply answers: the selected reply's, or without a
// selection the newest reply's; on a message that is no reply it says so.
func TestGoToQuoted(t *testing.T) {
	h := newHarness(t, eventsFixture(), 80, 24)
	h.key("j", "enter", "esc") // the team chat, reading
	h.key("p")
	if got := h.root().chat.selected; got != 1 {
		t.Fatalf("p without a selection selected #%d, want #1 (what the newest reply, #4, answers)", got)
	}
	h.wantScreen("▶")
	h.key("esc", "s") // the newest message, #10, is no reply
	h.key("p")
	h.wantScreen("not a reply")
	if got := h.root().chat.selected; got != 10 {
		t.Fatalf("p on a message that is no reply moved the selection to #%d", got)
	}
}

// Deleting an older message of mine leaves the inbox line on the newest
// message, which is still there: the delete event is not a message to preview.
func TestDeletingAnOlderMessageKeepsThePreview(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter", "esc", "s", "up", "up") // bob, reading; b5, mine
	h.key("D")
	h.wantScreen("delete your message for everyone? press D again")
	h.key("D")
	if m := be.sends[len(be.sends)-1]; m.Kind != wire.KindDelete || m.TargetSeq != 5 {
		t.Fatalf("delete sent as %+v", m)
	}
	h.key("esc", "esc") // let go of the selection, back to the inbox
	if h.root().page != pageInbox {
		t.Fatalf("page = %v, want the inbox", h.root().page)
	}
	h.wantScreen("ping me when you are back")
	for _, e := range h.root().inbox.entries {
		if e.ConversationID == wire.DirectConversationID("alice", "bob") && (e.LastMessageSender != "bob" || e.LastMessageBody != "ping me when you are back") {
			t.Fatalf("bob's inbox line after deleting b5: %q from %q", e.LastMessageBody, e.LastMessageSender)
		}
	}
}

// A draft in the composer survives a reaction (or reply, or edit) made in the
// middle of it: the action puts it aside and gives it back when it ends.
func TestActionsGiveTheDraftBack(t *testing.T) {
	h := newHarness(t, fixture(), 80, 24)
	h.key("enter")
	h.typeText("half a thought")
	h.key("esc", "+", "1") // reading; react 👍 to the newest
	if got := h.root().chat.compose.Value(); got != "half a thought" {
		t.Fatalf("after a reaction the draft is %q", got)
	}
	h.key("e", "esc") // an edit of my newest, cancelled
	if got := h.root().chat.compose.Value(); got != "half a thought" {
		t.Fatalf("after a cancelled edit the draft is %q", got)
	}
}
