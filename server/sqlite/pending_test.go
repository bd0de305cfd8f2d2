package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
)

// A reply moves the sender's boundary past the message they replied to; their
// later ack of that message changes no boundary but must still clear the pending
// row, or the message is delivered again on every reconnect.
func TestAckBelowImplicitReadClearsPending(t *testing.T) {
	s := MustOpen(t)
	ctx := context.Background()
	now := time.Now()
	conv := sqlite.CreateDirect(t, s, "a", "b")
	send := func(seq int64, from, to string) {
		t.Helper()
		m := server.Message{ConversationID: conv, SeqNo: seq, MessageID: from + string(rune('0'+seq)), SenderID: from, ReceiverID: to, Content: "hi", Timestamp: now}
		if err := s.AppendMessage(ctx, m, []string{to}); err != nil {
			t.Fatal(err)
		}
	}
	send(1, "b", "a") // pending for a from 1
	send(2, "a", "b") // a replies: a's boundary is 2
	st, changed, err := s.AdvanceStatus(ctx, "a", conv, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if changed || st.LastDeliveredSeq != 2 {
		t.Fatalf("ack of 1 after the reply: changed %v, delivered %d; want unchanged at 2", changed, st.LastDeliveredSeq)
	}
	pend, err := s.ListPending(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(pend) != 0 {
		t.Fatalf("a still has pending rows %+v after acking everything", pend)
	}
	// b's message 2 is still pending for b: the fix must not clear others' rows.
	if pend, _ := s.ListPending(ctx, "b"); len(pend) != 1 || pend[0].FirstUndeliveredSeq != 2 {
		t.Fatalf("b's pending rows = %+v, want one from seq 2", pend)
	}
}
