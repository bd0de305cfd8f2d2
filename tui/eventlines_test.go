package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Membership events show as lines of their own among the messages, from the
// history and live; a live one brings the header's name, topic and member
// count up to date.
func TestMembershipEventLines(t *testing.T) {
	be := fixture()
	team := "g:team"
	be.inbox = be.inbox[2:] // the team only: enter opens it
	be.msgs[team] = append(be.msgs[team], wire.Message{ConversationID: team, SeqNo: 4, MessageID: "e4", SenderID: "alice",
		Kind: wire.KindAdded, Members: []string{"dave"}, Timestamp: fixtureNow.Add(-40 * time.Minute)})
	h := newHarness(t, be, 100, 24)
	h.key("enter")
	h.wantScreen("· you added dave ·")
	if s := h.screen(); strings.Index(s, "works for me") > strings.Index(s, "you added dave") {
		t.Fatalf("the event line is not after the message before it:\n%s", s)
	}

	c := be.convs[team]
	c.Topic = "deploys \x1b[2J"
	c.Participants = append(c.Participants, wire.Participant{UserID: "dave", Role: wire.RoleMember})
	be.convs[team] = c
	h.send(client.MessageEvent{Message: wire.Message{ConversationID: team, SeqNo: 5, MessageID: "e5", SenderID: "bob",
		Kind: wire.KindTopic, Content: c.Topic, Timestamp: fixtureNow}})
	h.wantScreen("· bob set the topic to “deploys [2J” ·")
	h.wantScreen("group · 4 members · deploys")
	if strings.Contains(h.m.View().Content, "\x1b[2J") {
		t.Fatal("the topic's escape sequence reached the screen")
	}
}

// C on the inbox lists the channels; enter joins the one under the cursor
// and opens it on its history.
func TestChannelBrowserJoins(t *testing.T) {
	be := fixture()
	ops := wire.Conversation{ConversationID: "g:ops", Type: wire.Channel, Name: "ops", Topic: "deploys",
		Participants: []wire.Participant{{UserID: "bob", Role: wire.RoleAdmin}}}
	be.channels = []wire.Conversation{be.convs["g:team"], ops}
	be.channels[0].Type = wire.Channel // joined already: marked
	be.msgs["g:ops"] = []wire.Message{{ConversationID: "g:ops", SeqNo: 1, MessageID: "o1", SenderID: "bob", Content: "deploy at noon", Timestamp: fixtureNow.Add(-time.Hour)}}
	h := newHarness(t, be, 100, 30)
	h.key("C")
	h.wantScreen("Channels")
	h.wantScreen("✓ team")
	h.wantScreen("ops — deploys")
	h.key("j", "enter")
	h.wantScreen("deploy at noon")
	h.wantScreen("channel · 2 members · deploys")
	if _, ok := be.convs["g:ops"]; !ok {
		t.Fatal("enter did not join")
	}
}
