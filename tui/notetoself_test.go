package tui

import (
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// A note to self has no other member to deliver to or read: its messages
// stay at one tick (stored), whatever the user's own boundaries say — never
// ✓✓, which would claim someone else got them.
func TestTicksNoteToSelf(t *testing.T) {
	be := fixture()
	note := wire.DirectConversationID("alice", "alice")
	at := fixtureNow.Add(-time.Minute)
	be.addMessages(note, []string{"alice"}, 2, at, func(i int) string { return []string{"buy milk", "call the bank"}[i] })
	be.statuses[note] = []wire.MemberStatus{{UserID: "alice", LastDeliveredSeq: 2, LastReadSeq: 2}}
	be.inbox = append([]wire.InboxEntry{{ConversationID: note, Type: wire.Direct, Peer: "alice", LastSeq: 2,
		LastMessageBody: "call the bank", LastMessageSender: "alice", LastMessageAt: at, LastReadSeq: 2, LastDeliveredSeq: 2}}, be.inbox...)
	h := newHarness(t, be, 80, 24)
	h.key("enter") // the note, newest in the inbox
	h.wantTick("buy milk", "✓", false)
	h.wantTick("call the bank", "✓", false)

	h.send(client.StatusEvent{ConversationID: note, Status: wire.MemberStatus{UserID: "alice", LastDeliveredSeq: 3, LastReadSeq: 3}})
	h.wantTick("call the bank", "✓", false)
}
