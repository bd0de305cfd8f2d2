package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// The acks after a batch take the cursors its message puts reported, but not
// past another write of the same batch: here our own message's "sent" answer,
// stored after the messages, moves the cursor on, and the ack follows it as
// reading the cursor would.
func TestHandleAcksTheCursorAfterTheBatchsLastWrite(t *testing.T) {
	s, l := batchSession(t)
	ctx := context.Background()
	const dm = "dm:bob:me"
	if _, err := s.store.Enqueue(ctx, dm, "mine", "on its way"); err != nil {
		t.Fatal(err)
	}
	m := func(seq int64) wire.Message {
		return wire.Message{ConversationID: dm, SeqNo: seq, MessageID: fmt.Sprint("theirs-", seq), SenderID: "bob", Content: "hi", Timestamp: time.Unix(seq, 0)}
	}
	batch := []wire.Frame{messageFrame(m(1)), messageFrame(m(2)),
		{Type: wire.TypeSent, ConversationID: dm, SeqNo: 3, MessageID: "mine", Timestamp: time.Unix(3, 0)}}
	if err := s.handle(ctx, l, batch); err != nil {
		t.Fatal(err)
	}
	cur, _, err := s.store.Cursor(ctx, dm)
	if err != nil || cur != 3 {
		t.Fatalf("cursor %d (%v), want 3", cur, err)
	}
	if got := l.ackDue[dm]; got != cur {
		t.Errorf("ack due at %d, want the cursor after the batch, %d", got, cur)
	}
}
