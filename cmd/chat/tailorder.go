package main

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// tailOrder puts what a session reports, in the order frames arrived, into
// seq order per conversation for chat tail. Frames come out of order after a
// reconnect (live ones beside the sync that fills what was missed) and when a
// delivery worker resends a lost copy; a line printed is final, so a message
// is held until every seq_no below it is printed or known to hold none. The
// session's cursor says that: it moves over contiguous cached messages, and
// past a gap once complete syncs have shown it for client.SessionConfig's
// HoleWait (a number a failed write took). A message held for maxHold is
// printed anyway, with the ones after it: a gap the session cannot settle
// (a sync that makes no progress) does not stop tail for good.
//
// The cache stays bounded too: tail never reads an old message back except
// to quote it, so all but the newest keep of a conversation's printed
// messages are dropped from it every trimEvery printed.
type tailOrder struct {
	store   *localstore.Store
	now     func() time.Time
	maxHold time.Duration
	keep    int64
	convs   map[string]*tailConv
	// cursor reads a conversation's cursor (the store's; a test counts the
	// reads through it).
	cursor func(ctx context.Context, conv string) (int64, bool, error)
}

type tailConv struct {
	printed   int64         // the highest seq_no printed; 0 before the first
	held      []heldMessage // above printed, by seq_no
	sinceTrim int
}

type heldMessage struct {
	m     wire.Message
	since time.Time
}

const (
	tailMaxHold   = 30 * time.Second // three times the session's HoleWait
	tailKeep      = 500              // printed messages kept per conversation, for quotes
	tailTrimEvery = 256
)

func newTailOrder(store *localstore.Store) *tailOrder {
	return &tailOrder{store: store, now: time.Now, maxHold: tailMaxHold, keep: tailKeep, convs: map[string]*tailConv{}, cursor: store.Cursor}
}

// addBatch adds messages new to the session, in the order they came, and
// returns what can be printed: each conversation's held messages are looked
// at once for the batch (one cursor read, not one a message), after all of
// the batch is held. Looking at the cursor between two of them could let a
// message out ahead of one the batch still holds (its cursor covers every
// message of the batch: the session reports a message after storing it).
// Conversations come out interleaved as their messages arrived.
func (o *tailOrder) addBatch(ctx context.Context, msgs []wire.Message) ([]wire.Message, error) {
	type key struct {
		conv string
		seq  int64
	}
	arrived := make(map[key]int, len(msgs))
	var convs []string
	for i, m := range msgs {
		if !slices.Contains(convs, m.ConversationID) {
			convs = append(convs, m.ConversationID)
		}
		o.hold(m)
		arrived[key{m.ConversationID, m.SeqNo}] = i
	}
	var lists [][]wire.Message
	for _, id := range convs {
		out, err := o.release(ctx, id)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 {
			lists = append(lists, out)
		}
	}
	if len(lists) == 1 {
		return lists[0], nil
	}
	// Merge, each conversation in its own order, taking next the head that
	// arrived first (one held from an earlier batch before all).
	order := func(m wire.Message) int {
		if i, ok := arrived[key{m.ConversationID, m.SeqNo}]; ok {
			return i
		}
		return -1
	}
	var out []wire.Message
	for len(lists) > 0 {
		best := 0
		for i := 1; i < len(lists); i++ {
			if order(lists[i][0]) < order(lists[best][0]) {
				best = i
			}
		}
		out = append(out, lists[best][0])
		if lists[best] = lists[best][1:]; len(lists[best]) == 0 {
			lists = slices.Delete(lists, best, best+1)
		}
	}
	return out, nil
}

// add takes a message new to the session and returns what can be printed
// now, in order.
func (o *tailOrder) add(ctx context.Context, m wire.Message) ([]wire.Message, error) {
	o.hold(m)
	return o.release(ctx, m.ConversationID)
}

// hold puts m among its conversation's held messages, unless it was
// printed already or is held already.
func (o *tailOrder) hold(m wire.Message) {
	c := o.convs[m.ConversationID]
	if c == nil {
		c = &tailConv{}
		o.convs[m.ConversationID] = c
	}
	if m.SeqNo <= c.printed {
		// Printed already: a copy sent again after its row was trimmed.
		return
	}
	i, found := slices.BinarySearchFunc(c.held, m.SeqNo, func(h heldMessage, seq int64) int { return cmp.Compare(h.m.SeqNo, seq) })
	if !found {
		c.held = slices.Insert(c.held, i, heldMessage{m, o.now()})
	}
}

// anyHeld reports whether some conversation has messages held: whether
// tail's tick for them must run.
func (o *tailOrder) anyHeld() bool {
	for _, c := range o.convs {
		if len(c.held) > 0 {
			return true
		}
	}
	return false
}

// holding lists the conversations with messages held, for a periodic
// release: the cursor can pass a gap without a new message.
func (o *tailOrder) holding() []string {
	var ids []string
	for id, c := range o.convs {
		if len(c.held) > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// release returns the conversation's held messages at or below its cursor,
// and all of them when the oldest has been held for maxHold.
func (o *tailOrder) release(ctx context.Context, conv string) ([]wire.Message, error) {
	c := o.convs[conv]
	if c == nil || len(c.held) == 0 {
		return nil, nil
	}
	cur, _, err := o.cursor(ctx, conv)
	if err != nil {
		return nil, err
	}
	n := 0
	if o.now().Sub(c.held[0].since) >= o.maxHold {
		n = len(c.held)
	} else {
		for n < len(c.held) && c.held[n].m.SeqNo <= cur {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]wire.Message, n)
	for i, h := range c.held[:n] {
		out[i] = h.m
	}
	c.held = slices.Delete(c.held, 0, n)
	if out, err = o.unreported(ctx, conv, c.printed, out); err != nil {
		return nil, err
	}
	c.printed = out[len(out)-1].SeqNo
	n = len(out)
	c.sinceTrim += n
	if c.sinceTrim >= tailTrimEvery {
		c.sinceTrim = 0
		if _, err := o.store.TrimMessages(ctx, conv, c.printed-o.keep+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tailGapRead bounds the messages unreported reads from the cache.
const tailGapRead = 4096

// unreported adds to out, in seq order, the cached messages in its gaps
// (above printed): the cursor passed a gap with messages in it when the
// session stored them after the ones out holds and has not reported them
// yet (it reports a message after its commit, so a sync's fill can be
// stored while tail prints the live messages after it). Printed now, in
// their place, their reports are dropped later as copies; left out, the
// reports would come below printed and be dropped unprinted. Only gaps
// cost a read: a conversation printed in order never does. Not before the
// first release (printed 0, or just restored): what the cache holds below
// the first message printed is no gap tail missed.
func (o *tailOrder) unreported(ctx context.Context, conv string, printed int64, out []wire.Message) ([]wire.Message, error) {
	last := out[len(out)-1].SeqNo
	if printed == 0 || last-printed == int64(len(out)) {
		return out, nil // no gap
	}
	cached, err := o.store.MessagesAfter(ctx, conv, printed, int(min(last-printed, tailGapRead)))
	if err != nil {
		return nil, err
	}
	merged := make([]wire.Message, 0, len(cached)+len(out))
	i := 0
	for _, m := range cached {
		if m.SeqNo >= last {
			break
		}
		for i < len(out) && out[i].SeqNo < m.SeqNo {
			merged = append(merged, out[i])
			i++
		}
		if i < len(out) && out[i].SeqNo == m.SeqNo {
			continue // held: the report's copy
		}
		merged = append(merged, m)
	}
	return append(merged, out[i:]...), nil
}

// restored forgets what was printed of conversations the server lost
// messages of (client.RestoredEvent): their seq_nos are taken again by new
// messages, which must print, not be taken for copies of printed ones.
func (o *tailOrder) restored(convs []string) {
	for _, id := range convs {
		if c := o.convs[id]; c != nil {
			c.printed = 0
		}
	}
}
