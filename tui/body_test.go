package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// A message's Markdown shows formatted: the markers go, quotes get a bar,
// lists bullets, code blocks stay as written.
func TestMessagesShowFormatted(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 30)
	h.key("enter") // bob
	bob := wire.DirectConversationID("alice", "bob")
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bob, SeqNo: 8, MessageID: "md", SenderID: "bob",
		Content:   "the **build** is red: `go test` fails\n> it was green\n- rerun\n- bisect\n```\nif x {\n    y()\n}\n```",
		Timestamp: fixtureNow}})
	s := h.screen()
	for _, want := range []string{"the build is red: go test fails", "│ it was green", "• rerun", "• bisect", "    y()"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	for _, marker := range []string{"**", "`", "```", "- rerun"} {
		if strings.Contains(s, marker) {
			t.Errorf("screen shows the marker %q:\n%s", marker, s)
		}
	}
	raw := h.m.View().Content
	if !strings.Contains(raw, "\x1b[1m") && !strings.Contains(raw, ";1m") && !strings.Contains(raw, "[1;") {
		t.Errorf("nothing drawn bold:\n%q", raw)
	}
}

// A web address longer than the line is cut into line-wide pieces, each a
// link (OSC 8) to the whole address; it starts a line of its own; no line is
// wider than the chat.
func TestLongAddressesAreCutAndLinked(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 60, 30)
	h.key("enter")
	bob := wire.DirectConversationID("alice", "bob")
	url := "https://ci.example.com/builds/2026/11/25/deploy-pipeline-run-4821/logs?step=integration&attempt=2"
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bob, SeqNo: 8, MessageID: "u", SenderID: "bob",
		Content: "the failing run: " + url + ", see step 3", Timestamp: fixtureNow}})
	c := h.root().chat
	var pieces []string
	for _, l := range c.lines {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line %q is %d cells wide", l, w)
		}
		if strings.Contains(l, ansi.SetHyperlink(url)) {
			pieces = append(pieces, strings.TrimSpace(ansi.Strip(l)))
		}
	}
	if joined := strings.Join(pieces, ""); !strings.Contains(joined, url) {
		t.Fatalf("the linked pieces %q do not make the address", pieces)
	}
	if !strings.Contains(h.screen(), "the failing run:   ") {
		t.Errorf("the address does not start a line of its own:\n%s", h.screen())
	}
}

// A message's text is drawn once per width: selecting it, which draws its
// lines again, takes the text from the cache; an edit draws it anew.
func TestMessageTextIsDrawnOncePerWidth(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 30)
	h.key("enter")
	c := h.root().chat
	last := c.msgs[len(c.msgs)-1]
	k := bodyKey{messageID: last.MessageID, updated: last.UpdatedSeq, width: bodyWidthOf(t, c), styles: c.c.styles}
	before, ok := c.bodies[k]
	if !ok {
		t.Fatalf("no cached text for %s", last.MessageID)
	}
	h.key("esc", "s") // reading mode, select the newest message
	c = h.root().chat
	if c.selected == 0 {
		t.Fatal("nothing selected")
	}
	if after := c.bodies[k]; &after[0] != &before[0] {
		t.Error("selecting the message drew its text again")
	}
	edited := last
	edited.Content, edited.Edited, edited.UpdatedSeq = "*changed* text", true, 20
	h.send(client.ChangedEvent{Message: edited})
	h.wantScreen("changed text")
}

// bodyWidthOf is the text width the chat draws at, read from its cache.
func bodyWidthOf(t *testing.T, c chatModel) int {
	t.Helper()
	for k := range c.bodies {
		return k.width
	}
	t.Fatal("nothing drawn")
	return 0
}

// A message that mentions the user keeps its formatting and is drawn on the
// mention style, not the plain text colour.
func TestMentionTextKeepsTheMentionStyle(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 30)
	openChat(h, bobConv)
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 8, MessageID: "mm", SenderID: "bob",
		Content: "@alice see **this**", Mentions: []string{"alice"}, Timestamp: fixtureNow}})
	s := h.root().c.styles
	raw := h.m.View().Content
	for _, want := range []string{s.Mention.Render("@alice see "), s.Mention.Bold(true).Render("this")} {
		if !strings.Contains(raw, want) {
			t.Errorf("the view lacks %q:\n%q", want, raw)
		}
	}
}
