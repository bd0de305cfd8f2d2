package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// tailHarness stores messages as the session does (PutMessages moves the
// cursor) and hands what was new to a tailOrder, recording what it printed.
type tailHarness struct {
	t       *testing.T
	store   *localstore.Store
	order   *tailOrder
	clock   time.Time
	printed []int64
}

func newTailHarness(t *testing.T) *tailHarness {
	h := &tailHarness{t: t, store: localstore.MustOpen(t, localstore.Options{UserID: "bob"}), clock: time.Unix(1_800_000_000, 0)}
	h.order = newTailOrder(h.store)
	h.order.now = func() time.Time { return h.clock }
	return h
}

const tailConvID = "dm:alice:bob"

func tailMsg(seq int64) wire.Message {
	return wire.Message{ConversationID: tailConvID, SeqNo: seq, MessageID: fmt.Sprintf("m-%d", seq), SenderID: "alice",
		Content: fmt.Sprint("message ", seq), Timestamp: time.Unix(1_800_000_000+seq, 0)}
}

// arrive stores the messages and passes on what the store took as new.
func (h *tailHarness) arrive(seqs ...int64) {
	h.t.Helper()
	ctx := context.Background()
	for _, seq := range seqs {
		added, err := h.store.PutMessages(ctx, tailMsg(seq))
		if err != nil {
			h.t.Fatal(err)
		}
		for _, m := range added {
			out, err := h.order.add(ctx, m)
			if err != nil {
				h.t.Fatal(err)
			}
			for _, p := range out {
				h.printed = append(h.printed, p.SeqNo)
			}
		}
	}
}

func (h *tailHarness) tick() {
	h.t.Helper()
	for _, id := range h.order.holding() {
		out, err := h.order.release(context.Background(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, p := range out {
			h.printed = append(h.printed, p.SeqNo)
		}
	}
}

func (h *tailHarness) want(seqs ...int64) {
	h.t.Helper()
	if fmt.Sprint(h.printed) != fmt.Sprint(seqs) {
		h.t.Fatalf("printed %v, want %v", h.printed, seqs)
	}
}

// Issue 28: chat tail prints each conversation in seq order whatever order
// the frames come in, holds a gap until it is filled or passed, and prints
// nothing twice.
func TestTailOrder(t *testing.T) {
	t.Run("OKLiveBeforeTheFill", func(t *testing.T) {
		h := newTailHarness(t)
		h.arrive(1, 2)
		h.arrive(5, 6) // live frames before the sync that fills 3 and 4
		h.want(1, 2)
		h.arrive(4)
		h.want(1, 2)
		h.arrive(3)
		h.want(1, 2, 3, 4, 5, 6)
	})
	t.Run("OKGapPassedByTheCursor", func(t *testing.T) {
		h := newTailHarness(t)
		h.arrive(1, 3)
		h.want(1)
		// The session's complete syncs showed 2 holds no message.
		if err := h.store.AdvanceCursor(context.Background(), tailConvID, 2); err != nil {
			t.Fatal(err)
		}
		h.tick()
		h.want(1, 3)
	})
	t.Run("OKGapGivenUpAfterMaxHold", func(t *testing.T) {
		h := newTailHarness(t)
		h.arrive(1, 3, 4)
		h.clock = h.clock.Add(tailMaxHold - time.Second)
		h.tick()
		h.want(1)
		h.clock = h.clock.Add(time.Second)
		h.tick()
		h.want(1, 3, 4)
		h.arrive(2) // too late: printed nowhere, as a line printed is final
		h.want(1, 3, 4)
	})
	t.Run("OKBoundedCacheNothingTwice", func(t *testing.T) {
		h := newTailHarness(t)
		const n = 3000
		var all []int64
		for seq := int64(1); seq <= n; seq++ {
			h.arrive(seq)
			all = append(all, seq)
		}
		h.want(all...)
		cached, err := h.store.Messages(context.Background(), tailConvID, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(cached) > tailKeep+tailTrimEvery {
			t.Fatalf("%d of %d messages still cached; want at most %d", len(cached), n, tailKeep+tailTrimEvery)
		}
		h.arrive(10) // a lost copy sent again after its row was trimmed
		h.want(all...)
	})
	t.Run("OKSeqNosTakenAgainAfterARestore", func(t *testing.T) {
		h := newTailHarness(t)
		h.arrive(1, 2, 3)
		h.order.restored([]string{tailConvID})
		// The restored server's next message is 3 again (the cache dropped
		// the lost one, as the session's reconciliation does).
		if _, err := h.store.TrimMessages(context.Background(), tailConvID, 4); err != nil {
			t.Fatal(err)
		}
		h.arrive(3)
		h.want(1, 2, 3, 3)
	})
}
