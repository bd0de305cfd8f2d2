package server

import (
	"context"
	"sync"
	"time"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// The delivery worker (docs/architecture.md: delivery workers over pending_deliveries
// cover what the live path misses; docs/production.md says what each miss is).
//
// The live path hands a message to the recipients' connections through this
// node's hub and, for other nodes, through the registry and the broker. Either
// can lose it: a pub/sub message dropped, Redis down or flushed, a registry
// entry missing. The recipient's pending_deliveries row still says what they
// have not acked, so the node that stored a message remembers, per recipient
// and conversation, that it is due; after a grace period (Config.RedeliverAfter)
// it reads the recipient's pending rows, and what is still unacked it sends
// again (clients dedupe by conversation and seq_no) to wherever the registry
// says the recipient is, or, when they have no connection anywhere, pushes
// once. The cost is one pending read per recipient and conversation that was
// sent to in the last grace period, and nothing when nothing is sent.
//
// What the sender's node cannot see is a receiving node's lost subscription or
// a registry entry of it that went missing: that node notices the first itself
// (the broker reports a resubscription, the registry keeper a restore) and
// has the protocol engine re-run catch-up for its live connections
// (OnPublicationsLost; server/protocol/sweep.go); and, for whatever no one
// noticed, the engine reads each live connection's pending rows once per
// sweep period and sends what is there.

// dueKey is a recipient's conversation the worker will check.
type dueKey struct{ user, conv string }

type dueEntry struct {
	seq     int64     // the newest message to check at due: sent a grace period before it
	newer   int64     // the newest sent since: checked one grace period later
	due     time.Time // when to check its pending row
	tries   int       // redeliveries so far
	offline int       // checks that found the recipient with no connection
}

// redeliverPage bounds how many messages one redelivery reads.
const redeliverPage = 200

// redeliverTries bounds how often one message is sent again to a connected
// recipient who does not ack (a client that never acks is not helped by more):
// the next connect's catch-up still brings it.
const redeliverTries = 10

type dueList struct {
	mu      sync.Mutex
	entries map[dueKey]*dueEntry
}

// note records that msgs (of one conversation, ascending) were sent to
// members; the sender's own copies need no check.
func (d *dueList) note(msgs []Message, members []string, at time.Time) {
	if len(msgs) == 0 {
		return
	}
	last := msgs[len(msgs)-1]
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = map[dueKey]*dueEntry{}
	}
	for _, u := range members {
		if u == last.SenderID { // a batch is one sender's; they have no pending row
			continue
		}
		k := dueKey{u, last.ConversationID}
		if e := d.entries[k]; e != nil {
			// Not checked at this entry's time: a message is only sent again
			// once it is a grace period old, or a busy conversation, always
			// with something not yet acked, would be sent twice throughout.
			e.newer = max(e.newer, last.SeqNo)
			continue
		}
		d.entries[k] = &dueEntry{seq: last.SeqNo, due: at}
	}
}

// take removes and returns the entries due by now.
func (d *dueList) take(now time.Time) map[dueKey]*dueEntry {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out map[dueKey]*dueEntry
	for k, e := range d.entries {
		if !e.due.After(now) {
			if out == nil {
				out = map[dueKey]*dueEntry{}
			}
			out[k] = e
			delete(d.entries, k)
		}
	}
	return out
}

// again puts an entry back, due at at; a newer message noted meanwhile is kept.
func (d *dueList) again(k dueKey, e *dueEntry, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur := d.entries[k]; cur != nil {
		cur.seq = max(cur.seq, e.seq)
		cur.newer = max(cur.newer, e.newer)
		cur.tries, cur.offline = e.tries, e.offline
		return
	}
	e.due = at
	d.entries[k] = e
}

// next schedules the check of the messages noted after e was created, if any,
// one grace period on (they are at most that old now).
func (d *dueList) next(k dueKey, e *dueEntry, at time.Time) {
	if e.newer <= e.seq {
		return
	}
	d.again(k, &dueEntry{seq: e.newer, due: at}, at)
}

// runRedeliver is the worker's loop, until the Service's context ends.
func (s *Service) runRedeliver() {
	every := max(s.cfg.RedeliverAfter/4, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			if due := s.due.take(now); len(due) > 0 {
				s.redeliver(s.ctx, due)
			}
		}
	}
}

// redeliver checks the due entries against the recipients' pending rows and
// sends again what is still unacked, or pushes to recipients who are offline.
func (s *Service) redeliver(ctx context.Context, due map[dueKey]*dueEntry) {
	later := s.cfg.Now().Add(s.cfg.RedeliverAfter)
	pending := map[string]map[string]int64{} // user → conversation → first_undelivered_seq
	var users []string
	for k := range due {
		if _, ok := pending[k.user]; ok {
			continue
		}
		rows, err := s.store.ListPending(ctx, k.user)
		if err != nil {
			s.metrics.Fallbacks.WithLabelValues("redeliver").Inc()
			s.log.Debug("redeliver: list pending", "user", k.user, "err", err)
			pending[k.user] = nil // unknown: checked again later
			continue
		}
		m := make(map[string]int64, len(rows))
		for _, p := range rows {
			m[p.ConversationID] = p.FirstUndeliveredSeq
		}
		pending[k.user] = m
		users = append(users, k.user)
	}
	nodes, regErr := s.cfg.Registry.Nodes(ctx, users)
	for k, e := range due {
		rows := pending[k.user]
		if rows == nil { // the read failed: try again after the grace period
			s.due.again(k, e, later)
			continue
		}
		s.due.next(k, e, later)
		first, ok := rows[k.conv]
		if !ok || first > e.seq {
			continue // delivered: acked up to what was due
		}
		e.newer = 0 // scheduled apart by next
		online := s.hub.Online(k.user) || regErr == nil && len(nodes[k.user]) > 0
		switch {
		case online:
			e.offline = 0
			if e.tries++; e.tries > redeliverTries {
				s.log.Warn("redeliver: recipient does not ack; left for its next connect", "user", k.user, "conversation", k.conv, "seq", e.seq)
				continue
			}
			s.metrics.Redelivered.Inc()
			s.resend(ctx, k.user, k.conv, first-1, e.seq, nodes[k.user])
			s.due.again(k, e, later)
		case regErr != nil:
			s.due.again(k, e, later) // cannot tell where they are: ask again later
		default:
			// Offline on two checks a grace period apart, not one: a registry
			// entry can be missing briefly (an Add that failed, a Redis that
			// lost its data) while the user is connected, and the keeper puts
			// it back within a heartbeat.
			if e.offline++; e.offline < 2 {
				s.due.again(k, e, later)
				continue
			}
			s.pushOnce(ctx, k.user, k.conv, first, e.seq)
		}
	}
}

// resend sends the user's stored messages of conv in (after, upTo] to their
// connections here and on nodes.
func (s *Service) resend(ctx context.Context, user, conv string, after, upTo int64, nodes []string) {
	msgs, err := s.store.ListMessagesAfter(ctx, conv, after, int(min(upTo-after, redeliverPage)))
	if err == nil {
		err = s.hydrate(ctx, msgs)
	}
	if err != nil {
		s.log.Debug("redeliver: read messages", "conversation", conv, "err", err)
		return
	}
	queued := time.Now()
	for _, m := range msgs {
		d, err := wire.EncodeFrame(wire.Frame{Type: wire.TypeMessage, Message: ptr(wireMessage(m))})
		if err != nil {
			continue
		}
		s.hub.Deliver([]string{user}, conn.Frame{Data: d, Queued: queued, Message: true, ConversationID: conv, SeqNo: m.SeqNo}, nil)
		for _, n := range nodes {
			if n == s.cfg.NodeID {
				continue
			}
			if err := s.cfg.Broker.Publish(ctx, n, Envelope{UserIDs: []string{user}, Frame: d}); err != nil {
				s.metrics.Fallbacks.WithLabelValues("broker").Inc()
			}
		}
	}
}

// pushOnce notifies an offline user of the newest message waiting in conv.
// pushLooksAt bounds the waiting messages a push reads to find a mention: one
// small page per push (a push goes once per offline user and grace period,
// not per message).
const pushLooksAt = 20

func (s *Service) pushOnce(ctx context.Context, user, conv string, first, upTo int64) {
	if s.cfg.Pusher == nil {
		return
	}
	// One page of what waits, newest first: the push is the newest mention
	// of the user among them, if any (a mention must not hide behind the
	// small talk after it), else the newest message.
	msgs, err := s.store.ListMessages(ctx, conv, upTo+1, pushLooksAt)
	if err != nil || len(msgs) == 0 || msgs[0].SeqNo < first {
		return
	}
	m := msgs[0]
	for _, w := range msgs {
		if w.SeqNo < first {
			break
		}
		if pushesMention(w, user) {
			m = w
			break
		}
	}
	text := m.Content
	if m.IsEvent() {
		if text = eventPreview(m); text == "" {
			return // an edit or a delete is no news to wake a phone for
		}
	}
	n := Notification{UserID: user, ConversationID: conv, SeqNo: m.SeqNo, SenderID: m.SenderID, Preview: preview(text),
		Mention: pushesMention(m, user)}
	if err := s.cfg.Pusher.Push(ctx, n); err != nil {
		s.metrics.Fallbacks.WithLabelValues("push").Inc()
		s.log.Debug("push", "user", user, "err", err)
	}
}

// onEnvelope is the broker's handler: frames for this node's users, or word
// that some may have been lost.
func (s *Service) onEnvelope(env Envelope) {
	if env.Lost {
		s.log.Warn("publications to this node may have been lost; catching up its connections")
		s.resync()
		return
	}
	if env.Close {
		for _, u := range env.UserIDs {
			s.hub.CloseUser(u, conn.CloseTokenRevoked, "signed out by an admin")
		}
		return
	}
	s.hub.Deliver(env.UserIDs, conn.Frame{Data: env.Frame, Queued: time.Now(), Message: true}, nil)
}

// resyncSoon runs resync shortly, once, on the Service's background group:
// the registry keeper calls for it while it is still putting entries back.
func (s *Service) resyncSoon() {
	if !s.resyncing.CompareAndSwap(false, true) {
		return
	}
	s.bg.Go(func() {
		defer s.resyncing.Store(false)
		t := time.NewTimer(100 * time.Millisecond)
		defer t.Stop()
		select {
		case <-s.ctx.Done():
		case <-t.C:
			s.resync()
		}
	})
}
