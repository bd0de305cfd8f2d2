package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// storeAll stores the messages as the session does before it reports them
// (PutMessages moves the cursor) and returns what the store took as new.
func (h *tailHarness) storeAll(seqs ...int64) []wire.Message {
	h.t.Helper()
	var added []wire.Message
	for _, seq := range seqs {
		a, err := h.store.PutMessages(context.Background(), tailMsg(seq))
		if err != nil {
			h.t.Fatal(err)
		}
		added = append(added, a...)
	}
	return added
}

// seqsUpTo is the seq_nos 1 to n.
func seqsUpTo(n int64) []int64 {
	seqs := make([]int64, 0, n)
	for seq := int64(1); seq <= n; seq++ {
		seqs = append(seqs, seq)
	}
	return seqs
}

// loggedTailer is a tailer on h's order whose writes to stdout and stderr go
// to writes, in order, each message printed by printUnwrapped.
func (h *tailHarness) loggedTailer(writes *[]string) *tailer {
	tl := newTailer(writeLog{"stdout", writes}, writeLog{"stderr", writes}, h.order)
	tl.print = func(w io.Writer, m wire.Message) error {
		printUnwrapped(w, m)
		return nil
	}
	return tl
}

// printUnwrapped prints m as chat tail's text, unwrapped.
func printUnwrapped(w io.Writer, m wire.Message) {
	printMessage(w, m, false, nil, nil, textFormat{width: unwrapped})
}

// Issue 28: a batch of messages reads each conversation's cursor once, not
// once a message, and prints each conversation in seq order, the
// conversations interleaved as their messages came. Every message of a
// batch is stored before the batch is looked at, so the cursor covers them
// all: none may be let out ahead of one the batch holds.
func TestTailOrderReadsTheCursorOncePerBatch(t *testing.T) {
	h := newTailHarness(t)
	reads := 0
	h.order.cursor = func(ctx context.Context, conv string) (int64, bool, error) {
		reads++
		return h.store.Cursor(ctx, conv)
	}
	other := "g:other"
	otherMsg := func(seq int64) wire.Message {
		m := tailMsg(seq)
		m.ConversationID, m.MessageID = other, fmt.Sprint("o-", seq)
		return m
	}
	batch := h.storeAll(1, 2, 5, 6, 4, 3, 7, 9) // out of order, 8 missing
	for i, seq := range []int64{1, 2} {         // the other conversation's between them
		added, err := h.store.PutMessages(context.Background(), otherMsg(seq))
		if err != nil {
			t.Fatal(err)
		}
		batch = slices.Insert(batch, 1+2*i, added...)
	}
	out, err := h.order.addBatch(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range out {
		got = append(got, fmt.Sprint(p.ConversationID, " ", p.SeqNo))
	}
	want := []string{tailConvID + " 1", other + " 1", tailConvID + " 2", other + " 2",
		tailConvID + " 3", tailConvID + " 4", tailConvID + " 5", tailConvID + " 6", tailConvID + " 7"}
	if !slices.Equal(got, want) {
		t.Fatalf("printed %q\nwant %q", got, want)
	}
	if reads != 2 {
		t.Fatalf("%d cursor reads for a batch of %d messages in two conversations; want 2", reads, len(batch))
	}
	// The next batch reads it again: the cursor moved since.
	out, err = h.order.addBatch(context.Background(), h.storeAll(8))
	if err != nil {
		t.Fatal(err)
	}
	if reads != 3 || len(out) != 2 || out[0].SeqNo != 8 || out[1].SeqNo != 9 {
		t.Fatalf("%d cursor reads after a second batch (want 3), printed %d messages (want 8, 9)", reads, len(out))
	}
}

// writeLog records each Write of stdout and stderr, in order.
type writeLog struct {
	name   string
	writes *[]string
}

func (w writeLog) Write(p []byte) (int, error) {
	*w.writes = append(*w.writes, w.name+":"+string(p))
	return len(p), nil
}

// Issue 28: chat tail writes a batch of messages (the event that woke it
// and every one already waiting, an ack among them) in one write and one
// cursor read, the lines as printing each alone gave them; a note for
// stderr comes after the lines of the messages before it.
func TestTailerWritesABatchOnce(t *testing.T) {
	h := newTailHarness(t)
	var writes []string
	tl := h.loggedTailer(&writes)
	var want bytes.Buffer
	events := make(chan client.Event, 100)
	msgs := h.storeAll(seqsUpTo(60)...)
	for i, m := range msgs[1:] {
		events <- client.MessageEvent{Message: m}
		if i == 30 {
			// An ack tail shows nothing of: no reason to end the batch.
			events <- client.StatusEvent{ConversationID: tailConvID}
		}
	}
	reads := 0
	h.order.cursor = func(ctx context.Context, conv string) (int64, bool, error) {
		reads++
		return h.store.Cursor(ctx, conv)
	}
	for _, m := range msgs {
		printUnwrapped(&want, m)
	}
	if err := tl.take(context.Background(), client.MessageEvent{Message: msgs[0]}, events); err != nil {
		t.Fatal(err)
	}
	if len(writes) != 1 || writes[0] != "stdout:"+want.String() {
		t.Fatalf("%d writes, want 1 of the %d lines:\n%q", len(writes), len(msgs), writes)
	}
	if reads != 1 {
		t.Fatalf("%d cursor reads for one batch; want 1", reads)
	}

	writes = nil
	more := h.storeAll(61, 62)
	events <- client.StateEvent{State: client.State{Status: client.Reconnecting, Err: "eof", RetryAt: time.Now()}}
	events <- client.MessageEvent{Message: more[1]}
	if err := tl.take(context.Background(), client.MessageEvent{Message: more[0]}, events); err != nil {
		t.Fatal(err)
	}
	if len(writes) != 3 || !strings.Contains(writes[0], "message 61") || !strings.HasPrefix(writes[1], "stderr:chat tail: connection lost") ||
		!strings.Contains(writes[2], "message 62") {
		t.Fatalf("writes %q; want 61, the note, 62", writes)
	}
}

// A fill the session stored after live messages, before tail looked at the
// cursor, is printed in its place: the cursor covers it and its reports are
// still on their way. It was dropped when they came, as below what was
// printed.
func TestTailOrderPrintsAFillNotYetReported(t *testing.T) {
	h := newTailHarness(t)
	ctx := context.Background()
	out, err := h.order.addBatch(ctx, h.storeAll(1, 2))
	if err != nil || len(out) != 2 {
		t.Fatalf("first batch: %v, %d printed", err, len(out))
	}
	live := h.storeAll(5, 6) // reported
	fill := h.storeAll(3, 4) // stored by the sync, its reports not yet read
	var got []int64
	for _, batch := range [][]wire.Message{live, fill} {
		out, err := h.order.addBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out {
			got = append(got, m.SeqNo)
		}
	}
	if !slices.Equal(got, []int64{3, 4, 5, 6}) {
		t.Fatalf("printed %v after 1 and 2; want 3, 4, 5, 6 once each", got)
	}
}

// tail's tick for held messages runs only while something is held: an idle
// tail has no timer to wake it.
func TestHeldTickerRunsOnlyWhileHolding(t *testing.T) {
	var h heldTicker
	if h.c() != nil {
		t.Fatal("a tick before anything was held")
	}
	h.run(true)
	select {
	case <-h.c():
	case <-time.After(10 * heldTick):
		t.Fatal("no tick while a message is held")
	}
	h.run(true) // still holding: the same ticker
	h.run(false)
	if h.c() != nil {
		t.Fatal("the tick still runs with nothing held")
	}
	h.stop() // twice is fine
}

// A session with MessageBatches reports a commit's messages in one
// client.MessagesEvent: tail prints them as it prints the same messages
// one MessageEvent each, in one write, and a note between two such events
// comes between their lines.
func TestTailerPrintsAMessagesEvent(t *testing.T) {
	h := newTailHarness(t)
	var writes []string
	tl := h.loggedTailer(&writes)
	msgs := h.storeAll(seqsUpTo(60)...)
	var want bytes.Buffer
	for _, m := range msgs {
		printUnwrapped(&want, m)
	}
	events := make(chan client.Event, 10)
	events <- client.MessagesEvent{Messages: msgs[40:]}
	if err := tl.take(context.Background(), client.MessagesEvent{Messages: msgs[:40]}, events); err != nil {
		t.Fatal(err)
	}
	if len(writes) != 1 || writes[0] != "stdout:"+want.String() {
		t.Fatalf("%d writes, want 1 of the %d lines:\n%q", len(writes), len(msgs), writes)
	}

	writes = nil
	more := h.storeAll(61, 62, 63)
	events <- client.StateEvent{State: client.State{Status: client.Reconnecting, Err: "eof", RetryAt: time.Now()}}
	events <- client.MessagesEvent{Messages: more[2:]}
	if err := tl.take(context.Background(), client.MessagesEvent{Messages: more[:2]}, events); err != nil {
		t.Fatal(err)
	}
	if len(writes) != 3 || !strings.Contains(writes[0], "message 61") || !strings.Contains(writes[0], "message 62") ||
		!strings.HasPrefix(writes[1], "stderr:chat tail: connection lost") || !strings.Contains(writes[2], "message 63") {
		t.Fatalf("writes %q; want 61 and 62, the note, 63", writes)
	}
}

// A batch stops taking events once it holds tailBatchMax messages, however
// few events brought them: a commit's MessagesEvent holds hundreds, and a
// backlog of them taken whole would print nothing until all were stored.
func TestTailerBatchIsBoundedInMessages(t *testing.T) {
	h := newTailHarness(t)
	var writes []string
	tl := h.loggedTailer(&writes)
	printed := 0
	tl.print = func(io.Writer, wire.Message) error { printed++; return nil }
	msgs := h.storeAll(seqsUpTo(900)...)
	events := make(chan client.Event, 10)
	events <- client.MessagesEvent{Messages: msgs[300:600]}
	events <- client.MessagesEvent{Messages: msgs[600:]}
	if err := tl.take(context.Background(), client.MessagesEvent{Messages: msgs[:300]}, events); err != nil {
		t.Fatal(err)
	}
	if printed != 600 || len(events) != 1 {
		t.Fatalf("one batch printed %d messages and left %d events, want 600 (two events, %d or more messages) and one left", printed, len(events), tailBatchMax)
	}
}
