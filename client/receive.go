package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// Incoming frames: sync rounds after a (re)connect, storing messages before
// acking them, filling holes, applying boundaries; and read reports.

// startRound asks for every message after the given cursors (in several sync
// frames when there are more than wire.MaxCursors); "synced" answers end it.
func (s *Session) startRound(ctx context.Context, l *link, cursors []wire.Cursor) error {
	l.syncs, l.round, l.more, l.syncRetry = map[string]bool{}, map[string]int64{}, false, 0
	if s.cfg.Filter != nil {
		kept := cursors[:0:0]
		for _, c := range cursors {
			if s.cfg.Filter(c.ConversationID) {
				kept = append(kept, c)
			}
		}
		cursors = kept
	}
	for _, c := range cursors {
		l.round[c.ConversationID] = c.SeqNo
	}
	for len(cursors) > 0 || len(l.syncs) == 0 {
		n := min(len(cursors), wire.MaxCursors)
		s.mu.Lock()
		s.syncSeq++
		id := "sync-" + strconv.Itoa(s.syncSeq)
		s.mu.Unlock()
		l.syncs[id] = true
		if !l.push(ctx, wire.Frame{Type: wire.TypeSync, ID: id, Cursors: cursors[:n]}) {
			return context.Cause(l.ctx)
		}
		cursors = cursors[n:]
	}
	return nil
}

// synced handles the answer that ends one sync request.
func (s *Session) synced(ctx context.Context, l *link, f wire.Frame) error {
	if !l.syncs[f.ID] {
		return nil
	}
	delete(l.syncs, f.ID)
	l.more = l.more || f.More
	if len(l.syncs) > 0 {
		return nil
	}
	if l.more {
		// An answer was cut at the server's budget, or the server could not
		// read its store: ask again from the cursors we have now.
		next, progress, err := s.roundCursors(ctx, l)
		if err != nil {
			return err
		}
		if progress {
			return s.startRound(ctx, l, next)
		}
		if l.syncRetry > 0 {
			// Nothing came because the server failed (an outage): the round
			// stays open and goes again after its hint, so nothing below the
			// newest message is taken as not existing meanwhile.
			s.log.Info("sync failed on the server; asking again", "in", l.syncRetry)
			l.resync = time.After(l.syncRetry)
			return nil
		}
		// Without progress (a hole in the server's numbering that the answer
		// did not get past) stop; the next connect tries again.
		s.log.Warn("sync makes no progress; leaving the rest for the next connect", "conversations", len(next))
		l.round = nil
		return nil
	}
	// The round is complete: the server has sent every message after each
	// cursor up to its newest stored. So whatever is missing below our newest
	// cached message was not stored when it answered: a number no message took
	// (a failed write), or a write still in flight. The cursor passes it once
	// complete syncs have shown it for HoleWait; until then acks stop below it
	// (the server keeps it pending) and it is asked for again.
	round := l.round
	l.round = nil
	now := time.Now()
	for conv := range round {
		top, err := s.store.LatestSeq(ctx, conv)
		if err != nil {
			return err
		}
		cur, _, err := s.store.Cursor(ctx, conv)
		if err != nil {
			return err
		}
		if top > cur {
			h, seen := l.holes[conv]
			if !seen || h.cursor != cur {
				h = hole{cursor: cur, since: now}
				l.holes[conv] = h
			}
			if wait := h.since.Add(s.cfg.HoleWait).Sub(now); wait > 0 {
				if l.holeCheck == nil {
					l.holeCheck = time.After(wait)
				}
				continue
			}
			s.log.Info("passing seq_nos no message took", "conversation", conv, "after", cur, "up_to", top)
		}
		delete(l.holes, conv)
		if err := s.store.AdvanceCursor(ctx, conv, top); err != nil {
			return err
		}
		if err := s.ack(ctx, l, conv); err != nil {
			return err
		}
	}
	if len(l.gapped) > 0 {
		return s.syncGaps(ctx, l)
	}
	return nil
}

// roundCursors is the open round's conversations at the cursors stored now,
// and whether any moved since the round began.
func (s *Session) roundCursors(ctx context.Context, l *link) (next []wire.Cursor, progress bool, err error) {
	for conv, was := range l.round {
		cur, _, err := s.store.Cursor(ctx, conv)
		if err != nil {
			return nil, false, err
		}
		progress = progress || cur > was
		next = append(next, wire.Cursor{ConversationID: conv, SeqNo: cur})
	}
	return next, progress, nil
}

// resyncRound asks again for a round the server could not serve.
func (s *Session) resyncRound(ctx context.Context, l *link) error {
	l.resync = nil
	next, _, err := s.roundCursors(ctx, l)
	if err != nil {
		return err
	}
	return s.startRound(ctx, l, next)
}

// ack tells the server that a conversation is stored up to its cursor, unless
// this connection already said so: after SessionConfig.AckDelay, or sooner
// with a send into the conversation (takeAck).
func (s *Session) ack(ctx context.Context, l *link, conv string) error {
	cur, ok, err := s.store.Cursor(ctx, conv)
	if err != nil || !ok {
		return err
	}
	s.ackAt(ctx, l, conv, cur)
	return nil
}

// ackAt is ack for a caller that has just read the conversation's cursor.
func (s *Session) ackAt(ctx context.Context, l *link, conv string, cur int64) {
	l.ackMu.Lock()
	due := cur > l.acked[conv]
	if due {
		l.ackDue[conv] = cur
	}
	l.ackMu.Unlock()
	switch {
	case !due:
	case s.cfg.AckDelay < 0:
		l.flushAcks(ctx)
	case l.ackTimer == nil:
		l.ackTimer = time.After(s.cfg.AckDelay)
	}
}

// flushAcks sends every waiting ack, each as an ack frame.
func (l *link) flushAcks(ctx context.Context) {
	l.ackMu.Lock()
	due := l.ackDue
	l.ackDue = map[string]int64{}
	for conv, seq := range due {
		l.acked[conv] = seq
	}
	l.ackMu.Unlock()
	for conv, seq := range due {
		if !l.push(ctx, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: seq}) {
			return // the connection ended: the next one acks from its cursors
		}
	}
}

// takeAck hands the conversation's waiting ack to a send that carries it
// (ack_seq), on a server that takes one there (protocol 2, said in its
// hello); 0 when there is none.
func (l *link) takeAck(conv string) int64 {
	if l.conn.Protocol() < 2 {
		return 0
	}
	l.ackMu.Lock()
	defer l.ackMu.Unlock()
	seq, ok := l.ackDue[conv]
	if !ok {
		return 0
	}
	delete(l.ackDue, conv)
	l.acked[conv] = seq
	return seq
}

// handle applies a batch of frames in order. Consecutive messages are stored
// in one transaction, and only then acked: an ack means "stored here".
// Consecutive "sent" answers are applied in one transaction too.
func (s *Session) handle(ctx context.Context, l *link, batch []wire.Frame) error {
	var msgs []wire.Message
	var sents []wire.SendResponse
	var statuses []localstore.StatusUpdate
	touched := map[string]int64{} // conversation -> highest seq_no received
	var conflicted []string       // conversations where a seq_no came with another message_id
	replaced := 0                 // cached messages a sent answer replaced
	// The cursors the last put left, to ack without reading them again;
	// dropped by any other write of the batch that may move one.
	cursors := ackCursors{}
	flushMsgs := func() error {
		if len(msgs) == 0 {
			return nil
		}
		put, err := s.store.PutBatch(ctx, msgs...)
		if err != nil {
			// Not acked, so the server sends them again after the reconnect.
			return fmt.Errorf("store incoming messages: %w", err)
		}
		l.pace.stored(time.Now())
		if s.storedHook != nil {
			s.storedHook(len(msgs))
		}
		cursors.learn(msgs, put.Cursors)
		msgs = msgs[:0]
		for _, m := range put.Conflicts {
			if !slices.Contains(conflicted, m.ConversationID) {
				conflicted = append(conflicted, m.ConversationID)
			}
		}
		s.emitAdded(ctx, put.Added)
		if err := s.emitChanged(ctx, put.Added); err != nil {
			return err
		}
		// A message implies its sender read everything before it;
		// the server sends no status frame for that, so the ticks of our own
		// messages move here. The event carries the boundaries as cached
		// (by the put itself, in its transaction).
		for _, st := range put.Senders {
			if st.Status.UserID != s.self {
				s.emit(ctx, StatusEvent{ConversationID: st.ConversationID, Status: st.Status})
			}
		}
		return nil
	}
	flushSents := func() error {
		if len(sents) == 0 {
			return nil
		}
		cursors.forget() // our own messages stored may move a cursor
		done, err := s.store.CompleteSends(ctx, sents...)
		if err != nil {
			return err
		}
		// The count first: a Send that returns has left the outbox for good.
		s.refreshUnsent(ctx)
		var mine []wire.Message
		for i, d := range done {
			if d.Err != nil {
				s.log.Warn("sent answer not applied", "message_id", sents[i].MessageID, "err", d.Err)
				continue
			}
			if d.First {
				s.emit(ctx, SentEvent{Sent: sents[i], Message: d.Message})
				mine = append(mine, d.Message)
			}
			if d.Replaced {
				replaced++
				if !slices.Contains(conflicted, d.Message.ConversationID) {
					conflicted = append(conflicted, d.Message.ConversationID)
				}
			}
			s.resolve(sents[i].MessageID, sendResult{resp: sents[i]})
		}
		if err := s.emitChanged(ctx, mine); err != nil {
			return err
		}
		sents = sents[:0]
		return nil
	}
	flushStatuses := func() error {
		if len(statuses) == 0 {
			return nil
		}
		changed, err := s.store.ApplyStatuses(ctx, statuses...)
		if err != nil {
			return err
		}
		for i, u := range statuses {
			if changed[i] {
				s.emit(ctx, StatusEvent{ConversationID: u.ConversationID, Status: u.Status})
			}
		}
		statuses = statuses[:0]
		return nil
	}
	// Runs of one kind are applied together; a change of kind flushes the run
	// before, so everything takes effect in the order it arrived. Except
	// another member's boundaries: see deferStatus.
	kind := ""
	flushAll := func() error {
		if err := flushMsgs(); err != nil {
			return err
		}
		if err := flushSents(); err != nil {
			return err
		}
		return flushStatuses()
	}
	flush := func(next string) error {
		if next == kind {
			return nil
		}
		kind = next
		return flushAll()
	}
	for _, f := range batch {
		switch f.Type {
		case wire.TypeMessage:
			m := *f.Message
			if s.cfg.Filter != nil && !s.cfg.Filter(m.ConversationID) {
				continue
			}
			if m.MessageID == "" || m.SenderID == "" || wire.ValidateConversationID(m.ConversationID) != nil {
				s.log.Warn("skipping a malformed message", "conversation", m.ConversationID, "seq", m.SeqNo)
				continue
			}
			if wire.IsMembershipKind(m.Kind) && len(statuses) > 0 {
				// A member who leaves loses their boundaries: one of theirs
				// that came before must not be applied after.
				if err := flushAll(); err != nil {
					return err
				}
			}
			if err := flush(f.Type); err != nil {
				return err
			}
			msgs = append(msgs, m)
			touched[m.ConversationID] = max(touched[m.ConversationID], m.SeqNo)
		case wire.TypeSent:
			if err := flush(f.Type); err != nil {
				return err
			}
			sents = append(sents, wire.SendResponse{ConversationID: f.ConversationID, SeqNo: f.SeqNo, MessageID: f.MessageID, Timestamp: f.Timestamp, Content: f.Content, Mentions: f.Mentions})
		case wire.TypeStatus:
			u := localstore.StatusUpdate{ConversationID: f.ConversationID, Status: *f.Status}
			if deferStatus(kind, u, s.self) {
				statuses = append(statuses, u)
				continue
			}
			if err := flush(f.Type); err != nil {
				return err
			}
			statuses = append(statuses, u)
		default:
			if err := flush(f.Type); err != nil {
				return err
			}
			cursors.forget() // a page of history, a sync's end: may move one
			if err := s.handleOther(ctx, l, f); err != nil {
				return err
			}
		}
	}
	if err := flush(""); err != nil {
		return err
	}
	if len(conflicted) > 0 {
		cursors.forget() // a rollback moves cursors back
		if err := s.reconcileLive(ctx, l, conflicted, replaced); err != nil {
			return err
		}
	}
	// Ack each touched conversation up to its cursor, duplicates included: a
	// redelivery means the server missed our earlier ack.
	for conv, top := range touched {
		cur, ok, known := cursors.of(conv)
		if !known {
			var err error
			if cur, ok, err = s.store.Cursor(ctx, conv); err != nil {
				return err
			}
		}
		if !ok {
			continue
		}
		s.ackAt(ctx, l, conv, cur)
		// A message beyond the cursor means a hole: a message this device
		// missed, or a number the server skipped. A sync of that conversation
		// tells which (after the round in flight, which may already cover it).
		if _, inRound := l.round[conv]; !inRound && cur < top {
			l.gapped[conv] = true
		}
	}
	if len(l.gapped) > 0 && l.round == nil {
		return s.syncGaps(ctx, l)
	}
	return nil
}

func (s *Session) handleOther(ctx context.Context, l *link, f wire.Frame) error {
	switch f.Type {
	case wire.TypeSynced:
		return s.synced(ctx, l, f)
	case wire.TypeConversation:
		if err := s.store.PutConversation(ctx, *f.Conv); err != nil {
			s.log.Warn("store conversation", "err", err)
			return nil
		}
		s.emit(ctx, ConversationEvent{Conversation: *f.Conv})
	case wire.TypeError:
		s.handleError(ctx, l, f)
	case wire.TypeTyping:
		if f.UserID == "" || f.UserID == s.self || (s.cfg.Filter != nil && !s.cfg.Filter(f.ConversationID)) {
			return nil
		}
		// A hint that is stale in seconds: never hold up the session for it.
		select {
		case s.events <- TypingEvent{ConversationID: f.ConversationID, UserID: f.UserID, At: time.Now()}:
		default:
		}
	case wire.TypeResync:
		// Live copies may have been lost on the server's side: every
		// conversation is synced from its cursor, after the round in flight.
		cursors, err := s.store.Cursors(ctx)
		if err != nil {
			return err
		}
		for _, c := range cursors {
			l.gapped[c.ConversationID] = true
		}
		if l.round == nil && len(l.gapped) > 0 {
			return s.syncGaps(ctx, l)
		}
	case wire.TypeProfile:
		s.emit(ctx, ProfileEvent{Profile: *f.Profile})
	case wire.TypePong, wire.TypeHello:
	default:
		s.log.Debug("ignoring frame", "type", f.Type)
	}
	return nil
}

func (s *Session) handleError(ctx context.Context, l *link, f wire.Frame) {
	if f.ID == "" {
		s.log.Warn("server error", "err", f.Error)
		return
	}
	if l.syncs[f.ID] {
		// One cursor was refused (we left that conversation), or the server
		// could not read its store; "synced" still follows, with more set in
		// the second case, and the round is asked again after the hint.
		if f.Error.Code.Retryable() {
			l.syncRetry = max(l.syncRetry, f.Error.RetryAfter(), 100*time.Millisecond)
		}
		s.log.Info("sync refused", "err", f.Error)
		return
	}
	s.mu.Lock()
	isSend := l.sent[f.ID]
	s.mu.Unlock()
	if !isSend {
		s.log.Warn("server error", "id", f.ID, "err", f.Error)
		return
	}
	s.log.Info("send refused", "message_id", f.ID, "err", f.Error)
	// The ack it may have carried (ack_seq) is owed again: the next one says
	// the conversation's cursor, whatever this connection acked before.
	if conv, err := s.outboxConversation(ctx, f.ID); err == nil {
		l.ackMu.Lock()
		delete(l.acked, conv)
		l.ackMu.Unlock()
		if err := s.ack(ctx, l, conv); err != nil {
			s.log.Warn("ack again after a refused send", "conversation", conv, "err", err)
		}
	}
	if f.Error.Code.Retryable() {
		// Rate limited or overloaded: send it again after the hint, on whatever
		// connection is up by then.
		wait := max(f.Error.RetryAfter(), 100*time.Millisecond)
		s.mu.Lock()
		delete(l.sent, f.ID)
		s.mu.Unlock()
		id := f.ID
		s.after(wait, func() { s.retrySend(id) })
		return
	}
	if err := s.store.FailSend(ctx, f.ID, f.Error); err != nil && !errors.Is(err, localstore.ErrNotFound) {
		s.log.Warn("mark send failed", "err", err)
	}
	e, _ := s.outboxConversation(ctx, f.ID)
	s.emit(ctx, SendFailedEvent{ConversationID: e, MessageID: f.ID, Err: f.Error})
	s.refreshUnsent(ctx)
	s.resolve(f.ID, sendResult{err: f.Error})
}

// refreshInbox merges the server's inbox into the cache after a connect, so
// names, previews and unread counts are current.
func (s *Session) refreshInbox(ctx context.Context) {
	cached := s.cachedInboxIDs(ctx)
	resp, err := s.api.Inbox(ctx, 500)
	if err != nil {
		s.log.Info("refresh inbox", "err", err)
		return
	}
	if resp.Stale {
		s.offlineInbox(ctx, cached, resp)
		return
	}
	s.forgetUnlisted(ctx, cached, resp, 500)
	entries := resp.Conversations
	if s.cfg.Filter != nil {
		kept := entries[:0]
		for _, e := range entries {
			if s.cfg.Filter(e.ConversationID) {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	s.resendReads(ctx, entries)
	if err := s.store.PutInbox(ctx, entries...); err != nil {
		s.log.Warn("store inbox", "err", err)
		return
	}
	s.emit(ctx, InboxEvent{})
}

// MarkRead records that the user has seen a conversation up to seq: in the
// cache at once (unread counts drop), and on the server after
// SessionConfig.AckDelay (reads.go) or at the next connect.
func (s *Session) MarkRead(ctx context.Context, conversationID string, seq int64) error {
	if seq <= 0 {
		return nil
	}
	st := wire.MemberStatus{UserID: s.self, LastReadSeq: seq}
	changed, err := s.store.ApplyStatus(ctx, conversationID, st)
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	// The caller knows what it marked; the event is for other views, and must
	// not block a caller that is not draining Events.
	select {
	case s.events <- StatusEvent{ConversationID: conversationID, Status: st}:
	default:
	}
	s.queueRead(ctx, conversationID, seq)
	return nil
}

// syncGaps starts a sync round for the conversations where a hole was seen, from
// each one's cursor.
func (s *Session) syncGaps(ctx context.Context, l *link) error {
	var cs []wire.Cursor
	for conv := range l.gapped {
		cur, _, err := s.store.Cursor(ctx, conv)
		if err != nil {
			return err
		}
		cs = append(cs, wire.Cursor{ConversationID: conv, SeqNo: cur})
	}
	l.gapped = map[string]bool{}
	return s.startRound(ctx, l, cs)
}

// emitChanged reports the cached messages the events among msgs changed, once
// each, as they are now.
func (s *Session) emitChanged(ctx context.Context, msgs []wire.Message) error {
	type key struct {
		conv string
		seq  int64
	}
	seen := map[key]bool{}
	for _, m := range msgs {
		k := key{m.ConversationID, m.TargetSeq}
		if m.Kind == "" || seen[k] {
			continue
		}
		seen[k] = true
		target, err := s.store.Message(ctx, m.ConversationID, m.TargetSeq)
		if errors.Is(err, localstore.ErrNotFound) {
			continue // not cached: it comes with the event applied when it is fetched
		}
		if err != nil {
			return err
		}
		s.emit(ctx, ChangedEvent{Message: target})
	}
	return nil
}
