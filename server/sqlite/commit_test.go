package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
)

// TestBatchWithFailingJobs sends many appends at once, a third of them bound to
// fail (a taken seq_no or a resent message_id), so group-commit batches mix
// failing and good jobs: every good one must be stored and every failing one
// must change nothing.
func TestBatchWithFailingJobs(t *testing.T) {
	s := MustOpen(t)
	ctx := context.Background()
	now := time.Now()
	conv := sqlite.CreateDirect(t, s, "a", "b")
	msg := func(seq int64, id string) server.Message {
		return server.Message{ConversationID: conv, SeqNo: seq, MessageID: id, SenderID: "a", ReceiverID: "b", Content: id, Timestamp: now}
	}
	// Seed 1..100 so that later jobs can collide with them.
	for seq := int64(1); seq <= 100; seq++ {
		if err := s.AppendMessage(ctx, msg(seq, fmt.Sprint("m", seq)), []string{"b"}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 600
	// Good appends race for numbers above 100 and retry a refused one, as the
	// Service does: a store refuses a seq at or below last_seq.
	var next atomic.Int64
	next.Store(100)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			switch i % 3 {
			case 0: // good: a new seq and a new id
				for {
					errs[i] = s.AppendMessage(ctx, msg(next.Add(1), fmt.Sprint("new", i)), []string{"b"})
					if !errors.Is(errs[i], server.ErrSeqTaken) {
						break
					}
				}
			case 1: // taken seq_no
				errs[i] = s.AppendMessage(ctx, msg(int64(1+i%100), fmt.Sprint("clash", i)), []string{"b"})
			case 2: // resent message_id
				errs[i] = s.AppendMessage(ctx, msg(int64(5000+i), fmt.Sprint("m", 1+i%100)), []string{"b"})
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		var dup *server.DuplicateError
		switch i % 3 {
		case 0:
			if err != nil {
				t.Fatalf("good append %d: %v", i, err)
			}
		case 1:
			if !errors.Is(err, server.ErrSeqTaken) {
				t.Fatalf("append on a taken seq_no %d: got %v, want ErrSeqTaken", i, err)
			}
		case 2:
			if !errors.As(err, &dup) || dup.Original.SeqNo != int64(1+i%100) {
				t.Fatalf("resend %d: got %v, want the original at seq %d", i, err, 1+i%100)
			}
		}
	}
	msgs, err := s.ListMessagesAfter(ctx, conv, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 100+n/3 {
		t.Fatalf("stored %d messages, want %d", len(msgs), 100+n/3)
	}
	for _, m := range msgs {
		if m.SeqNo >= 5000 || m.MessageID[:1] == "c" {
			t.Fatalf("a failed append left message %d %q behind", m.SeqNo, m.MessageID)
		}
	}
	c, err := s.GetConversation(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if want := msgs[len(msgs)-1].SeqNo; c.LastSeq != want {
		t.Fatalf("last_seq %d, want %d (failed appends must not move it)", c.LastSeq, want)
	}
}

// A write the queue has room for is made even when its context has ended:
// choosing at random between the two would drop some, and a send numbered
// and then not written leaves a hole behind the sends after it.
func TestWriteQueuedDespiteAnEndedContext(t *testing.T) {
	s := MustOpen(t)
	conv := sqlite.CreateDirect(t, s, "a", "b")
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for seq := int64(1); seq <= 20; seq++ {
		m := server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("m", seq), SenderID: "a", ReceiverID: "b", Content: "hi", Timestamp: time.Now()}
		if err := s.AppendMessage(ended, m, []string{"b"}); err != nil {
			t.Fatalf("append %d with an ended context: %v, want it made", seq, err)
		}
	}
}

// A write that finds the queue full until its deadline is never made, and
// says so (server.ErrNotApplied): the send is answered unavailable, not
// maybe_stored. So is a write to a closed store.
func TestWriteNotQueuedIsNotApplied(t *testing.T) {
	s := MustOpen(t)
	conv := sqlite.CreateDirect(t, s, "a", "b")
	m := server.Message{ConversationID: conv, SeqNo: 1, MessageID: "m1", SenderID: "a", ReceiverID: "b", Content: "hi", Timestamp: time.Now()}
	release := sqlite.FillQueue(s)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := s.AppendMessage(ctx, m, []string{"b"})
	cancel()
	release()
	if !errors.Is(err, server.ErrNotApplied) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append with the queue full past its deadline: %v, want ErrNotApplied and the deadline", err)
	}
	if got, err := s.ListMessages(context.Background(), conv, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("stored %+v, %v; want nothing", got, err)
	}
	s.Close()
	if err := s.AppendMessage(context.Background(), m, []string{"b"}); !errors.Is(err, server.ErrNotApplied) {
		t.Fatalf("append to a closed store: %v, want ErrNotApplied", err)
	}
}
