package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// maxSeqRetries bounds re-seeding after seq_no collisions within one send.
const maxSeqRetries = 5

// Send stores a message and delivers it. It answers only once the
// message is durable. A resend of a stored message_id returns the first answer
// with created=false and stores nothing. from is the sending connection (nil for
// HTTP), which gets the "sent" answer instead of a copy of the message.
func (s *Service) Send(ctx context.Context, userID, convID string, req wire.SendRequest, from *conn.Conn) (wire.SendResponse, bool, error) {
	r := s.SendMany(ctx, userID, convID, []wire.SendRequest{req}, from)[0]
	return r.Resp, r.Created, r.Err
}

// SendResult is the answer to one message of SendMany.
type SendResult struct {
	Resp    wire.SendResponse
	Created bool // stored now, not a resend of a stored message
	Err     error
}

// SendMany is Send for several messages of one sender to one conversation, in
// order: they take consecutive places in the conversation and, on a store that
// can (BatchAppender), one durable write. Each gets its own answer; a message
// refused (bad input, rate limit) does not stop the others.
func (s *Service) SendMany(ctx context.Context, userID, convID string, reqs []wire.SendRequest, from *conn.Conn) []SendResult {
	return s.SendAcked(ctx, userID, convID, reqs, 0, from)
}

// SendAcked is SendMany for sends that carry the sending device's cumulative
// ack of the conversation (protocol 2's ack_seq; 0 for none). The ack is
// applied whatever becomes of the sends: with the first message stored, by a
// store that can (SenderAcker), and otherwise as an ack frame would be. It
// needs no status frame when a message was stored: the message implies its
// sender has everything before it (implicit read), and clients apply that.
func (s *Service) SendAcked(ctx context.Context, userID, convID string, reqs []wire.SendRequest, ack int64, from *conn.Conn) []SendResult {
	out := s.sendMany(ctx, userID, convID, reqs, ack, from)
	if ack <= 0 {
		return out
	}
	if _, folded := s.store.(SenderAcker); folded && slices.ContainsFunc(out, func(r SendResult) bool { return r.Created }) {
		return out
	}
	if _, err := s.Advance(ctx, userID, convID, ack, 0, from); err != nil {
		// As for an ack frame the store could not take: the device acks again
		// with its next cursor, and until then the messages stay pending.
		s.log.Debug("ack carried by a send not applied", "user", userID, "conversation", convID, "err", err)
	}
	return out
}

func (s *Service) sendMany(ctx context.Context, userID, convID string, reqs []wire.SendRequest, ack int64, from *conn.Conn) []SendResult {
	start := time.Now()
	out := make([]SendResult, len(reqs))
	failAll := func(err error) []SendResult {
		for i := range out {
			if out[i].Err == nil {
				out[i].Err = err
			}
		}
		return out
	}
	if err := wire.ValidateConversationID(convID); err != nil {
		return failAll(err)
	}
	valid := make([]int, 0, len(reqs))
	for i, req := range reqs {
		if out[i].Err = s.checkSend(userID, req); out[i].Err == nil {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		return out
	}
	members, err := s.memberIDs(ctx, convID)
	if err != nil {
		return failAll(err)
	}
	if !slices.Contains(members, userID) {
		return failAll(wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", convID))
	}
	valid, resent := s.answerResends(ctx, userID, convID, reqs, valid, out)
	if len(resent) > 0 {
		s.refanout(ctx, convID, resent, members, from)
	}
	valid = s.checkGroupMentions(ctx, userID, convID, reqs, valid, out)
	valid, linked := s.linkAttachments(ctx, convID, reqs, valid, out)
	defer s.unlinkFailed(ctx, convID, reqs, linked, out)
	if len(valid) == 0 {
		return out
	}
	if !s.begin() {
		return failAll(&wire.Error{Code: wire.CodeUnavailable, Message: "server is shutting down; retry on reconnect", RetryAfterMs: 1000})
	}
	defer s.wg.Done()
	// Seed 003's bounded queue: past the bound a send is refused at once with a
	// retry hint instead of queueing behind a slow store. A batch is let in while
	// fewer than the bound are in flight, so the bound may be passed by one batch
	// (at most maxFrameBatch), but no batch is refused for its size alone: one
	// larger than the bound would be refused on every retry.
	n := int64(len(valid))
	if s.inFlight.Add(n)-n >= int64(s.cfg.MaxInFlight) {
		s.inFlight.Add(-n)
		s.metrics.Overloaded.Add(float64(n))
		return failAll(&wire.Error{Code: wire.CodeOverloaded, Message: "server is overloaded; retry after the hint", RetryAfterMs: 500})
	}
	defer s.inFlight.Add(-n)

	if !isGroup(convID) && !s.lastSeq.known(convID) {
		// A direct conversation is created by its first message. Checking before a
		// seq_no is taken keeps that message at seq 1.
		a, b, _ := wire.DirectMembers(convID)
		peer := a
		if peer == userID {
			peer = b
		}
		if _, _, err := s.ensureDirect(ctx, userID, peer); err != nil {
			return failAll(err)
		}
		s.lastSeq.raise(convID, 0)
	}
	// Usually every send is valid, and the store's answers go straight into
	// out; otherwise the valid ones are stored and answered apart.
	batch, stored := reqs, out
	if len(valid) < len(reqs) {
		batch, stored = make([]wire.SendRequest, len(valid)), make([]SendResult, len(valid))
		for i, k := range valid {
			batch[i] = reqs[k]
		}
	}
	s.storeMany(ctx, userID, convID, members, batch, ack, from, stored)
	for i, k := range valid {
		r := stored[i]
		switch {
		case errors.Is(r.Err, ErrNotFound):
			r.Err = wire.Errorf(wire.CodeNotFound, "no conversation %s", convID)
		case r.Err != nil:
			if r.Err = s.sendFailed(r.Err); isMaybeStored(r.Err) {
				s.checkLater(convID, userID, batch[i].MessageID, members)
			}
		case !r.Created:
			s.metrics.Duplicates.Inc()
		default:
			s.metrics.MessagesStored.Inc()
			s.metrics.SendDuration.Observe(time.Since(start).Seconds())
		}
		out[k] = r
	}
	return out
}

// checkSend is the input one message must have before it is given a seq_no
// (the sender's rate is counted for the whole batch by admitSends).
func (s *Service) checkSend(userID string, req wire.SendRequest) error {
	if err := req.Validate(); err != nil {
		return err
	}
	if req.Attachment != "" {
		if wire.MediaOwner(req.Attachment) != userID {
			return wire.Errorf(wire.CodeForbidden, "attachment %s was uploaded by someone else; upload your own copy", req.Attachment)
		}
	}
	if len(req.Content) > s.cfg.MaxMessageBytes {
		return wire.Errorf(wire.CodeTooLarge, "message is %d bytes; the limit is %d", len(req.Content), s.cfg.MaxMessageBytes)
	}
	if !utf8.ValidString(req.Content) {
		return wire.Errorf(wire.CodeInvalid, "content is not valid UTF-8")
	}
	return nil
}

// answerResends answers the sends (indexes into out) whose message_id is
// already stored with the first answer, before they are rate-limited or given
// a seq_no: a client retrying after a lost answer must not burn numbers or its
// send budget (docs/protocol.md). A message_id stored by another member is
// refused (idTaken). It returns the sends still to store, and the
// stored records of those it answered (refanout sends them again). When the
// lookup fails the sends go on: the store's own duplicate check still answers
// them (and may then take a number), so this only ever saves work.
func (s *Service) answerResends(ctx context.Context, userID, convID string, reqs []wire.SendRequest, valid []int, out []SendResult) (fresh []int, resent []Message) {
	// A send marked first_try has no earlier copy to find (and if its client
	// was wrong, the write finds the copy: only a seq_no goes unused), so the
	// usual send costs no read before its write.
	var ids []string
	for _, k := range valid {
		if !reqs[k].FirstTry {
			ids = append(ids, reqs[k].MessageID)
		}
	}
	if len(ids) == 0 {
		return valid, nil
	}
	sent, err := s.store.SentMessages(ctx, convID, ids)
	if err != nil {
		s.metrics.Fallbacks.WithLabelValues("resend_lookup").Inc()
		return valid, nil
	}
	if len(sent) == 0 {
		return valid, nil
	}
	fresh = valid[:0:0]
	for _, k := range valid {
		if m, ok := sent[reqs[k].MessageID]; ok {
			if m.SenderID != userID {
				out[k] = SendResult{Err: idTaken(convID, reqs[k].MessageID)}
				continue
			}
			s.metrics.Duplicates.Inc()
			m.ConversationID, m.MessageID = convID, reqs[k].MessageID
			out[k] = SendResult{Resp: sendResponse(m)}
			resent = append(resent, m)
			continue
		}
		fresh = append(fresh, k)
	}
	return fresh, resent
}

// storeMany counts the sender's rate, assigns seq_nos and stores the messages
// under the conversation's lock, then hands them to the members' connections
// in turn, so every connection sees a conversation's messages in seq order.
// On a store that queues writes in order (QueuedAppender) plain messages are
// only queued under the lock and waited for outside it (storeQueued); replies
// and events, which read their target first, are stored under it. The answer
// to reqs[i] goes in out[i].
func (s *Service) storeMany(ctx context.Context, userID, convID string, members []string, reqs []wire.SendRequest, ack int64, from *conn.Conn, out []SendResult) {
	st := s.locks.lock(convID)
	reqs, out, pool := s.admitSends(ctx, userID, convID, reqs, out)
	receivers := without(members, userID)
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	msgs := make([]Message, len(reqs))
	for i, req := range reqs {
		msgs[i] = Message{ConversationID: convID, MessageID: req.MessageID, SenderID: userID, Content: req.Content,
			Attachment: req.Attachment, AttachmentInfo: req.AttachmentInfo, Timestamp: now,
			Kind: req.Kind, TargetSeq: req.TargetSeq, ReplyTo: req.ReplyTo, SenderAck: ack}
		msgs[i].Mentions = resolveMentions(msgs[i], members)
		if len(receivers) == 1 && !isGroup(convID) {
			msgs[i].ReceiverID = receivers[0]
		}
	}
	if qa, ok := s.store.(QueuedAppender); ok && len(msgs) > 0 && len(msgs) <= qa.MaxAppend(len(members)) &&
		s.numbersAhead(convID, pool) && !slices.ContainsFunc(msgs, needsTarget) {
		if s.storeQueued(ctx, st, qa, msgs, members, receivers, out, pool, from) {
			return
		}
		// Refused as taken, nothing stored: below, under the lock, the same
		// numbers are tried first and the counter re-seeded, as for any send.
		st.Lock()
	}
	defer st.Unlock()
	defer s.release(ctx, convID, pool)
	ba, _ := s.store.(BatchAppender)
	for start := 0; start < len(msgs); {
		n := 1
		if ba != nil {
			n = min(len(msgs)-start, max(ba.MaxAppend(len(members)), 1))
			// Replies and events are checked against their target one by one.
			if k := slices.IndexFunc(msgs[start:start+n], needsTarget); k >= 0 {
				n = max(k, 1)
			}
		}
		chunk, res := msgs[start:start+n], out[start:start+n]
		start += n
		if n > 1 {
			batched, err := s.appendBatch(ctx, ba, chunk, receivers, res, pool)
			if err != nil {
				for i := start - n; i < start; i++ {
					out[i].Err = err
				}
				notTried(out[start:], err)
				break // what earlier chunks stored is still fanned out below
			}
			if batched {
				continue
			}
			// Not batched (a seq_no was taken, or the store cannot write this
			// chunk in one piece) and nothing was stored: one at a time re-seeds.
		}
		failed := false
		for i := range chunk {
			m, created, err := s.storeChecked(ctx, chunk[i], receivers, pool)
			res[i] = SendResult{Resp: sendResponse(m), Created: created, Err: err}
			chunk[i] = m
			if failed = storeFailed(err); failed {
				notTried(out[start-n+i+1:], err)
				break
			}
		}
		if failed {
			break
		}
	}
	// One fan-out for what is new, in seq order, still under the lock, after
	// the queued sends ahead.
	st.waitTurn()
	s.handOver(ctx, convID, msgs, out, members, from)
}

// handOver gives the members' connections what a send stored (out[i] answers
// msgs[i]): the new messages, in seq order, and again those the write found
// stored already (as answerResends' are).
func (s *Service) handOver(ctx context.Context, convID string, msgs []Message, out []SendResult, members []string, from *conn.Conn) {
	var resent []Message
	fresh := msgs[:0] // filtered in place: msgs is not read again
	for i, r := range out {
		switch {
		case r.Created:
			fresh = append(fresh, msgs[i])
		case r.Err == nil:
			resent = append(resent, msgs[i])
		}
	}
	s.fanout(ctx, fresh, members, from)
	if len(resent) > 0 {
		s.refanout(ctx, convID, resent, members, from)
	}
}

// storeQueued numbers msgs and queues their write under the stripe's lock
// (held on entry), lets go of the lock, and waits for the write to be durable
// outside it: the conversation's next send is numbered and queued meanwhile
// and can share this write's commit, where under the lock it would wait for
// the commit after. The store applies writes in the order they were queued,
// so seq order holds in the store; turns keep it on connections. It returns
// false, with nothing stored and the lock let go, when the store refused the
// numbers as taken (ErrSeqTaken): the caller stores msgs one at a time.
func (s *Service) storeQueued(ctx context.Context, st *stripe, qa QueuedAppender, msgs []Message, members, receivers []string, out []SendResult, pool *seqPool, from *conn.Conn) bool {
	convID := msgs[0].ConversationID
	unused := *pool
	var wait func() ([]*DuplicateError, error)
	if err := s.nextSeqs(ctx, msgs, pool); err != nil {
		wait = func() ([]*DuplicateError, error) { return nil, fmt.Errorf("%w: %w", ErrNotApplied, err) }
	} else {
		wait = qa.QueueAppend(ctx, msgs, receivers)
	}
	s.release(ctx, convID, pool)
	prev, mine := st.takeTurn()
	st.Unlock()
	// The next queued send of the stripe hands over after this one, whatever
	// becomes of this one; so this one waits for the one before.
	defer close(mine)
	dups, err := wait()
	if prev != nil {
		<-prev
	}
	if errors.Is(err, ErrSeqTaken) {
		*pool = unused
		return false
	}
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return true
	}
	s.appended(msgs, dups, out)
	s.handOver(ctx, convID, msgs, out, members, from)
	return true
}

// notTried answers the sends after a write that failed: they are not tried,
// so they are known not stored whatever became of that write, and their
// resends, behind its resend, keep the order they were sent in. Stored now,
// they would take numbers before it, should it turn out not stored.
func notTried(out []SendResult, err error) {
	for i := range out {
		out[i].Err = fmt.Errorf("%w: an earlier send of the batch failed: %w", ErrNotApplied, err)
	}
}

// storeFailed says whether err is a failure the client retries (the store's
// write, or a read before it), rather than a refusal of that one send on its
// merits (a bad reply target, an event that lost its race), which the sends
// after it do not wait on.
func storeFailed(err error) bool {
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		return we.Code.Retryable()
	}
	return err != nil && !errors.Is(err, ErrNotFound)
}

// numbersAhead says whether pool's numbers come after every seq_no this node
// has seen stored in convID, so that a queued write of them will not be
// refused as taken. A write queued with numbers the table already has would
// send the sends queued behind it, which take the numbers after, the same
// way; re-seeding after them would skip numbers and leave a hole that holds
// the conversation's clients up. After a restart the in-memory counter starts
// behind the table: until a write or a read of the conversation on this node
// tells its last seq_no, sends go the locked way, which re-seeds in order.
func (s *Service) numbersAhead(convID string, pool *seqPool) bool {
	top := s.lastSeq.get(convID)
	return pool.err == nil && top > 0 && pool.next > top
}

// needsTarget says whether m refers to another message, which storeChecked
// reads and checks before m is stored.
func needsTarget(m Message) bool { return m.IsEvent() || m.ReplyTo != 0 }

// appendBatch numbers msgs and stores them in one write. done is false when the
// store refused the batch with ErrSeqTaken (a seq_no taken, or a batch it can
// only write one message at a time) and nothing was stored.
func (s *Service) appendBatch(ctx context.Context, ba BatchAppender, msgs []Message, receivers []string, out []SendResult, pool *seqPool) (done bool, err error) {
	unused := *pool
	if err := s.nextSeqs(ctx, msgs, pool); err != nil {
		return false, fmt.Errorf("%w: %w", ErrNotApplied, err)
	}
	dups, err := ba.AppendMessages(ctx, msgs, receivers)
	if errors.Is(err, ErrSeqTaken) {
		*pool = unused // stored one at a time, they try the same numbers first
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.appended(msgs, dups, out)
	return true, nil
}

// appended answers a batch the store wrote (dups[i]: msgs[i] was stored
// already, under its original number) and notes the conversation's newest
// seq_no. A resend becomes its stored original in msgs, which refanout reads
// back by its number; a message_id another member's message has is refused.
func (s *Service) appended(msgs []Message, dups []*DuplicateError, out []SendResult) {
	convID := msgs[0].ConversationID
	var top int64
	for i, m := range msgs {
		if dups[i] != nil && dups[i].Original.SenderID != m.SenderID {
			out[i] = SendResult{Err: idTaken(convID, m.MessageID)}
			continue
		}
		if dups[i] != nil {
			out[i] = SendResult{Resp: sendResponse(dups[i].Original)}
			msgs[i] = dups[i].Original
			continue
		}
		out[i] = SendResult{Resp: sendResponse(m), Created: true}
		top = m.SeqNo
	}
	s.lastSeq.raise(convID, top)
}

// storeOne stores one message (the caller holds the conversation's lock),
// re-seeding the counter when its seq_no is taken.
func (s *Service) storeOne(ctx context.Context, m Message, receivers []string, pool *seqPool) (Message, bool, error) {
	for attempt := 0; ; attempt++ {
		seq, err := s.nextSeq(ctx, m.ConversationID, pool)
		if err != nil {
			return m, false, fmt.Errorf("%w: %w", ErrNotApplied, err)
		}
		m.SeqNo = seq
		err = s.store.AppendMessage(ctx, m, receivers)
		var dup *DuplicateError
		switch {
		case err == nil:
			s.lastSeq.raise(m.ConversationID, seq)
			return m, true, nil
		case errors.As(err, &dup) && dup.Original.SenderID != m.SenderID:
			return m, false, idTaken(m.ConversationID, m.MessageID)
		case errors.As(err, &dup):
			return dup.Original, false, nil
		case errors.Is(err, ErrSeqTaken) && attempt < maxSeqRetries:
			// The counter is behind the table (a restart, or Redis lost it):
			// re-seed from the stored last_seq and take a new number. Nothing
			// was overwritten.
			c, gerr := s.store.GetConversation(ctx, m.ConversationID)
			if gerr != nil {
				pool.drop()
				return m, false, fmt.Errorf("%w: %w", ErrNotApplied, gerr) // the last write was refused
			}
			s.giveBackUnstored(ctx, m.ConversationID, pool, c.LastSeq)
			if rerr := s.cfg.Sequencer.Reseed(ctx, m.ConversationID, c.LastSeq); rerr != nil {
				s.log.Warn("reseed sequencer", "conversation", m.ConversationID, "err", rerr)
			}
			s.metrics.Fallbacks.WithLabelValues("seq_reseed").Inc()
		default:
			return m, false, err
		}
	}
}

// giveBackUnstored empties pool after its numbers collided with stored ones.
// A counter that restarted behind the table (a restart, a Redis that lost its
// keys) hands a batch numbers at or below last_seq, which are stored ones,
// and, when the batch is larger than that, numbers above it, which nobody
// has: those go back to the Sequencer (if it is still at the pool's last), so
// that re-seeding to last_seq carries on from there instead of leaving them
// as a hole that would hold the clients' acks for HoleWait.
func (s *Service) giveBackUnstored(ctx context.Context, convID string, pool *seqPool, lastSeq int64) {
	if pool != nil {
		pool.next = max(pool.next, lastSeq+1) // the stored ones stay taken
		s.release(ctx, convID, pool)
	}
	pool.drop()
}

// idTaken refuses a send whose message_id another member's message has in
// convID. A message_id is idempotent per sender: answering with the other
// member's message would tell this sender their message was stored, and it
// never would be (docs/protocol.md).
func idTaken(convID, messageID string) error {
	return wire.Errorf(wire.CodeMessageIDTaken,
		"message_id %s is taken by another member's message in %s: send yours with a new message_id", messageID, convID)
}

func sendResponse(m Message) wire.SendResponse {
	r := wire.SendResponse{ConversationID: m.ConversationID, SeqNo: m.SeqNo, MessageID: m.MessageID, Timestamp: m.Timestamp, Mentions: m.Mentions}
	if m.Kind == wire.KindReaction {
		r.Content = m.Content // the toggle as resolved: "" when it took the reaction away
	}
	return r
}

// nextSeqs numbers msgs (of one conversation) in order: from the pool, else
// one call to the Sequencer for all of them, or, when it fails, one number at
// a time from the store's counter.
func (s *Service) nextSeqs(ctx context.Context, msgs []Message, pool *seqPool) error {
	convID := msgs[0].ConversationID
	if first, ok := pool.take(len(msgs)); ok {
		for i := range msgs {
			msgs[i].SeqNo = first + int64(i)
		}
		return nil
	}
	last, err := int64(0), pool.err
	if err == nil { // else the Sequencer failed for this batch already
		last, err = s.cfg.Sequencer.NextN(ctx, convID, len(msgs))
	}
	if err == nil {
		for i := range msgs {
			msgs[i].SeqNo = last - int64(len(msgs)-1-i)
		}
		return nil
	}
	cause := err
	for i := range msgs {
		if msgs[i].SeqNo, err = s.storeSeq(ctx, convID, cause); err != nil {
			return err
		}
	}
	return nil
}

// nextSeq takes a number from the pool, else from the Sequencer, or, when it
// fails, from the store's counter.
func (s *Service) nextSeq(ctx context.Context, convID string, pool *seqPool) (int64, error) {
	if seq, ok := pool.take(1); ok {
		return seq, nil
	}
	if pool.err != nil { // the Sequencer failed for this batch already
		return s.storeSeq(ctx, convID, pool.err)
	}
	seq, err := s.cfg.Sequencer.Next(ctx, convID)
	if err == nil {
		return seq, nil
	}
	return s.storeSeq(ctx, convID, err)
}

// storeSeq is the Sequencer's fallback: the counter on the conversation item,
// which keeps strict order while Redis is down. cause is why the Sequencer
// failed.
func (s *Service) storeSeq(ctx context.Context, convID string, cause error) (int64, error) {
	s.metrics.Fallbacks.WithLabelValues("sequencer").Inc()
	s.log.Debug("sequencer failed, using the store counter", "conversation", convID, "err", cause)
	return s.store.NextSeq(ctx, convID)
}

// fanout delivers stored messages, in order, to every connection of every
// member, on this node and (through the registry and broker) on others; the
// sending connection is skipped, since it gets the "sent" answers.
func (s *Service) fanout(ctx context.Context, msgs []Message, members []string, from *conn.Conn) {
	if len(msgs) == 0 {
		return
	}
	// Each message is encoded from one Frame and body reused for all, rather
	// than from a Frame built per message only to be encoded (a sixth of the
	// bytes the server allocated per message).
	data := make([][]byte, 0, len(msgs))
	var body wire.Message
	f := wire.Frame{Type: wire.TypeMessage, Message: &body}
	queued := time.Now()
	touch := Touch{Users: members, ConvID: msgs[0].ConversationID}
	for _, m := range msgs {
		if !m.IsEvent() { // an event is not activity: the inbox order stays
			touch.At = m.Timestamp
		}
		body = wireMessage(m)
		d, err := wire.EncodeFrame(f)
		if err != nil {
			s.log.Error("encode frame", "type", f.Type, "err", err)
			return
		}
		s.hub.Deliver(members, conn.Frame{Data: d, Queued: queued, Message: true, ConversationID: m.ConversationID, SeqNo: m.SeqNo}, from)
		data = append(data, d)
	}
	s.publish(ctx, members, data, touch)
	// Pushes to offline members, and second tries for live ones whose copy was
	// lost on the way, come from the delivery worker after its grace period.
	s.due.note(msgs, members, queued.Add(s.cfg.RedeliverAfter))
}

// preview shortens content for a notification.
func preview(content string) string {
	const max = 100
	if utf8.RuneCountInString(content) <= max {
		return content
	}
	r := []rune(content)
	return string(r[:max-1]) + "…"
}

// push encodes f once and hands it to the users' connections everywhere. It
// is for frames other than messages (statuses, conversation changes): fanout
// delivers messages, marked for the delivery metrics and catch-up's dedupe. It
// returns the users known to be online (nil when the registry could not say).
func (s *Service) push(ctx context.Context, users []string, f wire.Frame, skip *conn.Conn) map[string]bool {
	d, err := wire.EncodeFrame(f)
	if err != nil {
		s.log.Error("encode frame", "type", f.Type, "err", err)
		return nil
	}
	s.hub.Deliver(users, conn.Frame{Data: d, Queued: time.Now()}, skip)
	return s.publish(ctx, users, [][]byte{d}, Touch{})
}

// publish hands encoded frames, in order, to the nodes other than this one
// where the users are connected, with one registry lookup, and does touch, in
// one call of the SendPath; this node's connections have had them from
// hub.deliver. It returns the users known to be online (nil when the registry
// could not say).
func (s *Service) publish(ctx context.Context, users []string, data [][]byte, touch Touch) map[string]bool {
	r := s.cfg.SendPath.Relay(ctx, s.cfg.NodeID, users, data, touch)
	if r.TouchErr != nil {
		s.metrics.Fallbacks.WithLabelValues("inbox_touch").Inc()
	}
	if r.RegistryErr != nil {
		// A registry we cannot read means remote users count as offline: their
		// pending_deliveries rows bring them the message on reconnect.
		s.metrics.Fallbacks.WithLabelValues("registry").Inc()
		return nil
	}
	if r.BrokerErr != nil {
		s.metrics.Fallbacks.WithLabelValues("broker").Inc()
		s.log.Debug("publish to nodes", "err", r.BrokerErr)
	}
	return r.Online
}

// wireMessage is a stored message as clients see it.
func wireMessage(m Message) wire.Message {
	if hasSubjects(m.Kind) {
		return wireMembershipEvent(m)
	}
	return wire.Message{ConversationID: m.ConversationID, SeqNo: m.SeqNo, MessageID: m.MessageID, SenderID: m.SenderID,
		Content: m.Content, Attachment: m.Attachment, AttachmentInfo: m.AttachmentInfo, Timestamp: m.Timestamp,
		Kind: m.Kind, TargetSeq: m.TargetSeq, ReplyTo: m.ReplyTo,
		Edited: m.Edited, Deleted: m.Deleted, Reactions: m.Reactions, UpdatedSeq: m.UpdatedSeq, Mentions: m.Mentions}
}
