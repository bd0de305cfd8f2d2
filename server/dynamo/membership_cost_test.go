package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// TestJoinCost counts the DynamoDB units of a channel join (its event, the
// participant and its index entry, in one transaction), beside a message to
// the same channel, and of a page of the channel listing
// (docs/dynamodb.md, "Channels and membership events"). A join reaches every
// member (10 pending rows), the message every member but its sender (9): a
// join may cost the message's units, one pending row more (2 WCU), the new
// participant's item (a transactional put, 2 WCU) with its index entry
// (1 WCU), and their message_status item's mention start (a transactional
// update, 2 WCU: mention_joiners.go).
func TestJoinCost(t *testing.T) {
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter})
	ctx := context.Background()
	now := time.Now().UTC()
	const members = 10
	var ps []server.Participant
	var others []string
	for i := range members {
		u := fmt.Sprintf("user%02d", i)
		ps = append(ps, server.Participant{UserID: u, Role: wire.RoleMember, JoinedAt: now.Add(-time.Hour)})
		if i > 0 {
			others = append(others, u)
		}
	}
	conv := "g:cost-channel"
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Channel, Name: "ops", CreatedAt: now.Add(-time.Hour)}, ps))
	for i := 1; i <= 2; i++ { // the second is the steady figure: the first also moves index entries
		meter.Reset()
		must(t, s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: int64(i), MessageID: wire.NewMessageID(), SenderID: "user00",
			Content: strings.Repeat("a typical message of a few words ", 3), Timestamp: now.Add(time.Duration(i) * time.Second)}, others))
	}
	message := meter.Units()
	t.Logf("a message to a channel of %d: %g WCU: %s", members, message, meter)

	meter.Reset()
	must(t, s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: 3, MessageID: wire.NewMessageID(), SenderID: "newcomer",
		Kind: wire.KindJoined, Timestamp: now.Add(3 * time.Second)}, append([]string{"user00"}, others...)))
	join := meter.Units()
	t.Logf("a join of a channel of %d: %g WCU: %s", members, join, meter)
	if join > message+7 {
		t.Errorf("a join costs %g WCU, a message %g: want at most 7 more (a pending row, the participant and its index entry, the status item)", join, message)
	}

	meter.Reset()
	must(t, s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: 4, MessageID: wire.NewMessageID(), SenderID: "newcomer",
		Kind: wire.KindLeft, Timestamp: now.Add(4 * time.Second)}, append([]string{"user00"}, others...)))
	t.Logf("a leave of a channel of %d: %g WCU: %s", members+1, meter.Units(), meter)

	for i := range 20 {
		must(t, s.CreateConversation(ctx, server.Conversation{ID: fmt.Sprintf("g:cost-list-%02d", i), Type: wire.Channel, Name: "c", Topic: "a topic of some words", CreatedAt: now},
			[]server.Participant{{UserID: "user00", Role: wire.RoleAdmin, JoinedAt: now}}))
	}
	meter.Reset()
	page, err := s.ListChannels(ctx, "", 20)
	must(t, err)
	t.Logf("a page of %d channels: %g RCU: %s", len(page), meter.ReadUnits(), meter)
	if len(page) != 20 {
		t.Fatalf("listed %d", len(page))
	}
}
