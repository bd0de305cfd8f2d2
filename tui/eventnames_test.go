package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Membership lines name people as the rest of the screen does, including
// one no longer among the members (asked for with the page), from the
// history and live.
func TestMembershipLinesShowDisplayNames(t *testing.T) {
	be := namedFixture()
	be.profiles["dave"] = wire.Profile{UserID: "dave", DisplayName: "Dave Grohl"}
	team := "g:team"
	be.inbox = be.inbox[2:] // the team only: enter opens it
	be.msgs[team] = append(be.msgs[team], wire.Message{ConversationID: team, SeqNo: 4, MessageID: "e4", SenderID: "bob",
		Kind: wire.KindRemoved, Members: []string{"dave"}, Timestamp: fixtureNow.Add(-40 * time.Minute)})
	h := newHarness(t, be, 100, 24)
	h.key("enter")
	h.wantScreen("· Bob Dylan removed Dave Grohl ·")

	h.send(client.MessageEvent{Message: wire.Message{ConversationID: team, SeqNo: 5, MessageID: "e5", SenderID: "alice",
		Kind: wire.KindAdded, Members: []string{"bob", "dave"}, Timestamp: fixtureNow}})
	h.wantScreen("· you added Bob Dylan and Dave Grohl ·")
	if s := h.screen(); strings.Contains(s, "removed dave") {
		t.Fatalf("a membership line shows a user id:\n%s", s)
	}
}
