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

// TestMessageCost counts, by code, the DynamoDB write units one message
// costs (docs/dynamodb.md, "What one message costs"; dynamo.Meter says
// which figures are the server's and which follow AWS's rules) and holds them
// to issue 19's targets: at most 8 for a direct message, 4 + 2N for a group
// of N. A conversation's first message after a pause also moves the members'
// inbox index entries; both figures are logged.
func TestMessageCost(t *testing.T) {
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter})
	ctx := context.Background()
	content := strings.Repeat("a typical message of a few words ", 3) // ~100 bytes
	now := time.Now().UTC()

	type result struct{ first, steady float64 }
	send := func(t *testing.T, conv string, members []string, n int) result {
		t.Helper()
		var ps []server.Participant
		for _, u := range members {
			ps = append(ps, server.Participant{UserID: u, Role: wire.RoleMember, JoinedAt: now.Add(-time.Hour)})
		}
		typ := wire.Group
		if len(members) == 2 {
			typ = wire.Direct
		}
		must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: typ, CreatedAt: now.Add(-time.Hour)}, ps))
		var r result
		for i := 1; i <= n; i++ {
			sender := members[i%len(members)]
			var receivers []string
			for _, u := range members {
				if u != sender {
					receivers = append(receivers, u)
				}
			}
			m := server.Message{ConversationID: conv, SeqNo: int64(i), MessageID: wire.NewMessageID(), SenderID: sender,
				Content: content, Timestamp: now.Add(time.Duration(i) * time.Second)}
			if typ == wire.Direct {
				m.ReceiverID = receivers[0]
			}
			meter.Reset()
			must(t, s.AppendMessage(ctx, m, receivers))
			u := meter.Units()
			t.Logf("%s message %d: %g WCU: %s", conv, i, u, meter)
			if i == 1 {
				r.first = u
			} else {
				r.steady = max(r.steady, u)
			}
		}
		return r
	}
	members := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("user%02d", i))
		}
		return out
	}

	t.Run("direct", func(t *testing.T) {
		r := send(t, wire.DirectConversationID("alice", "bob"), []string{"alice", "bob"}, 4)
		t.Logf("direct: first message %g WCU, then %g WCU a message (target ≤ 8)", r.first, r.steady)
		if r.steady > 8 {
			t.Errorf("a direct message costs %g WCU, want ≤ 8", r.steady)
		}
		// An ack that clears bob's pending row and moves his boundaries.
		meter.Reset()
		if _, _, err := s.AdvanceStatus(ctx, "bob", wire.DirectConversationID("alice", "bob"), 4, 0); err != nil {
			t.Fatal(err)
		}
		t.Logf("ack (AdvanceStatus delivered): %g WCU, %g RCU: %s", meter.Units(), meter.ReadUnits(), meter)
		meter.Reset()
		if _, _, err := s.AdvanceStatus(ctx, "bob", wire.DirectConversationID("alice", "bob"), 4, 4); err != nil {
			t.Fatal(err)
		}
		t.Logf("read receipt (AdvanceStatus read, delivered unchanged): %g WCU, %g RCU: %s", meter.Units(), meter.ReadUnits(), meter)
		meter.Reset()
		if _, err := s.Inbox(ctx, "bob", 20); err != nil {
			t.Fatal(err)
		}
		t.Logf("inbox of one conversation: %g RCU: %s", meter.ReadUnits(), meter)
		// A window of 8 sends stored together (AppendMessages).
		var batch []server.Message
		for i := range 8 {
			batch = append(batch, server.Message{ConversationID: wire.DirectConversationID("alice", "bob"), SeqNo: int64(10 + i), MessageID: wire.NewMessageID(),
				SenderID: "alice", ReceiverID: "bob", Content: content, Timestamp: now.Add(time.Minute + time.Duration(i)*time.Millisecond)})
		}
		meter.Reset()
		if _, err := s.AppendMessages(ctx, batch, []string{"bob"}); err != nil {
			t.Fatal(err)
		}
		t.Logf("a batch of 8 direct messages: %g WCU (%g a message): %s", meter.Units(), meter.Units()/8, meter)
	})
	t.Run("crosscheck", func(t *testing.T) {
		// Where moto's figure is right (a small PutItem or DeleteItem is 1
		// WCU), the rules give the same.
		meter.Reset()
		// An invite is one small unconditional PutItem (LinkMedia, used
		// here before, is a transaction since uploads have records).
		must(t, s.PutInvite(ctx, server.Invite{Hash: "crosscheck-invite", CreatedBy: "alice", ExpiresAt: now.Add(time.Hour)}))
		if o := meter.Ops()["PutItem"]; o.Units != 1 || o.Reported != 1 {
			t.Fatalf("PutItem: %s, want 1 by both", meter)
		}
	})
	for _, n := range []int{3, 10} {
		t.Run(fmt.Sprintf("group%d", n), func(t *testing.T) {
			r := send(t, fmt.Sprintf("g%d-cost", n), members(n), 4)
			target := float64(4 + 2*n)
			t.Logf("group of %d: first message %g WCU, then %g WCU a message (target ≤ %g)", n, r.first, r.steady, target)
			if r.steady > target {
				t.Errorf("a message to a group of %d costs %g WCU, want ≤ %g", n, r.steady, target)
			}
		})
	}
}
