package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// plainStore hides the SQLite store's optional abilities (SenderAcker,
// BatchAppender): the Service must then apply a send's ack after the write,
// as for a store that cannot do it in the append.
type plainStore struct{ server.Store }

// A send may carry the sender's cumulative ack (protocol 2): the sender's
// pending deliveries up to it are cleared whether the store folds the ack
// into the append or the Service applies it after, and whether the send is
// stored or refused.
func TestAckCarriedBySend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plain  bool
		refuse bool
	}{
		{"folded into the append", false, false},
		{"after the write", true, false},
		{"send refused", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sq := openStore(t)
			var store server.Store = sq
			if tc.plain {
				store = plainStore{sq}
			}
			svc := serviceOn(t, store, server.Config{SendRate: -1, MaxMessageBytes: 100})
			registerAliceAndBob(t, svc)
			conv := wire.DirectConversationID("alice", "bob")
			aliceSends(t, svc, conv, 3)
			// Bob's device stored 1 and 2; 3 is still on its way.
			req := wire.SendRequest{MessageID: "b0", Content: "reply", FirstTry: true}
			if tc.refuse {
				req.Content = strings.Repeat("x", 101)
			}
			res := svc.SendAcked(ctx, "bob", conv, []wire.SendRequest{req}, 2, nil)
			if tc.refuse != (res[0].Err != nil) {
				t.Fatalf("send: %v", res[0].Err)
			}
			pending, err := sq.ListPending(ctx, "bob")
			if err != nil {
				t.Fatal(err)
			}
			// What the ack covers is no longer pending (a store may clear up to
			// the boundary the reply moved, as after an ack frame).
			if len(pending) > 1 || len(pending) == 1 && pending[0].FirstUndeliveredSeq < 3 {
				t.Fatalf("bob's pending after acking 2 with a send: %+v, want nothing before seq 3", pending)
			}
			if tc.refuse && (len(pending) != 1 || pending[0].FirstUndeliveredSeq != 3) {
				t.Fatalf("bob's pending after acking 2 with a refused send: %+v, want seq 3 still pending", pending)
			}
			st, err := sq.ListStatuses(ctx, conv, []string{"bob"})
			if err != nil {
				t.Fatal(err)
			}
			want := int64(4) // the reply implies bob has everything before it
			if tc.refuse {
				want = 2
			}
			if st[0].LastDeliveredSeq != want {
				t.Fatalf("bob's delivered boundary %d, want %d", st[0].LastDeliveredSeq, want)
			}
		})
	}
}

// A send wrongly marked first_try (its message_id already stored) is still
// answered with the original, and nothing is stored twice.
func TestFirstTryResendAnsweredWithOriginal(t *testing.T) {
	ctx := context.Background()
	sq := openStore(t)
	svc := serviceOn(t, sq, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	first, created, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m1", Content: "hi", FirstTry: true}, nil)
	if err != nil || !created {
		t.Fatalf("first send: created %v, %v", created, err)
	}
	again, created, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m1", Content: "hi", FirstTry: true}, nil)
	if err != nil || created || again.SeqNo != first.SeqNo {
		t.Fatalf("resend marked first_try: seq %d created %v err %v, want seq %d, not created", again.SeqNo, created, err, first.SeqNo)
	}
	page, err := sq.ListMessagesAfter(ctx, conv, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 {
		t.Fatalf("%d messages stored, want 1", len(page))
	}
}

// A send refused because its connection's queue is full still delivers the
// ack it carries: folded into the ack queued for the conversation, as an ack
// frame would be.
func TestAckOfARefusedSendStillCounts(t *testing.T) {
	ctx := context.Background()
	svc, store, eng, bob, conv := bobWithAQueueOfFour(t, func(conn.Frame) {})
	// Bob's first send waits on the conversation's lock, so what he sends next
	// stays queued: an ack of 1, then sends until the queue (4) is full.
	unlock := svc.LockConversation(conv)
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSend, ID: "b0", ConversationID: conv, MessageID: "b0", Content: "held"})
	testenv.WaitFor(t, 5*time.Second, func() bool { return svc.InFlight() == 1 })
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: 1})
	for i := 1; i <= 3; i++ {
		eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSend, ID: "b" + strconv.Itoa(i), ConversationID: conv, MessageID: "b" + strconv.Itoa(i), Content: "queued"})
	}
	// Refused (overloaded): its ack of 3 must still clear alice's 2 and 3.
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSend, ID: "b4", ConversationID: conv, MessageID: "b4", Content: "refused", AckSeq: 3})
	unlock()
	testenv.WaitFor(t, 5*time.Second, func() bool {
		p, err := store.ListPending(ctx, "bob")
		return err == nil && (len(p) == 0 || p[0].FirstUndeliveredSeq > 3)
	})
}
