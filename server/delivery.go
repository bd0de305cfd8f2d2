package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/chatterm/chat/wire"
)

// catchUpPage is how many stored messages one catch-up read fetches.
const catchUpPage = 200

// Connect registers a new connection of userID, opened with token, and starts
// its catch-up: the hello frame, then every pending message in seq order per
// conversation. Live messages that arrive meanwhile are held and follow the
// backlog.
func (s *Service) Connect(ctx context.Context, userID, token, connID string) (*Conn, error) {
	c := newConn(connID, userID, s.cfg.SendBuffer)
	c.tokenHash = hashSecret(token)
	s.hub.add(c)
	s.metrics.Connections.Inc()
	if err := s.cfg.Registry.Add(ctx, Presence{UserID: userID, ConnID: connID, NodeID: s.cfg.NodeID}); err != nil {
		// Without a registry entry other nodes treat the user as offline: this node
		// still delivers, and what other nodes store waits in pending_deliveries.
		// A registry shared between nodes puts the entry back with this node's
		// next heartbeat (NodeKeeper).
		s.metrics.Fallbacks.WithLabelValues("registry").Inc()
		s.log.Debug("registry add", "user", userID, "err", err)
	}
	period := sweepEvery * s.cfg.RedeliverAfter
	c.nextSweep.Store(time.Now().Add(time.Duration(rand.Int64N(int64(period))) + period/sweepEvery).UnixNano())
	hello, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeHello, UserID: userID})
	c.push(OutFrame{Data: hello, Queued: time.Now()})
	s.enqueue(c, request{run: func() {
		if err := s.catchUpPending(c); err != nil && !errors.Is(err, errConnEnded) {
			s.catchUpLater(c, 1)
		}
		c.endCatchUp()
	}})
	return c, nil
}

// Disconnect forgets a connection (the transport calls it when the socket ends).
func (s *Service) Disconnect(c *Conn) {
	c.close(1000, "")
	s.hub.remove(c)
	s.metrics.Connections.Dec()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.cfg.Registry.Remove(ctx, Presence{UserID: c.UserID, ConnID: c.ID, NodeID: s.cfg.NodeID}); err != nil {
		s.log.Debug("registry remove", "user", c.UserID, "err", err)
	}
	if code, _ := c.CloseStatus(); code == ClosePolicy {
		s.metrics.SlowConsumers.Inc()
	}
}

// catchUpPending sends c every message pending for its user. An error means
// the store did not answer (what was sent before it stands); the caller tries
// again later.
func (s *Service) catchUpPending(c *Conn) error {
	pend, err := s.store.ListPending(s.ctx, c.UserID)
	if err != nil {
		s.log.Debug("catch-up: list pending", "user", c.UserID, "err", err)
		return err
	}
	for _, p := range pend {
		if _, _, err := s.sendAfterLimit(c, p.ConversationID, p.FirstUndeliveredSeq-1, 0); err != nil {
			return err
		}
	}
	return nil
}

// catchUpLater runs c's catch-up again after a pause that grows with each
// failed try, while c lives: a catch-up the store could not serve (an outage,
// an open circuit) must not be dropped, or what was pending would wait for
// the next connect.
func (s *Service) catchUpLater(c *Conn, try int) {
	wait := min(time.Duration(1<<min(try-1, 5))*time.Second, 30*time.Second)
	time.AfterFunc(wait, func() {
		select {
		case <-c.closed:
			return
		case <-s.ctx.Done():
			return
		default:
		}
		again := func() {
			if err := s.catchUpPending(c); err != nil && !errors.Is(err, errConnEnded) {
				s.catchUpLater(c, try+1)
			}
		}
		if !s.enqueue(c, request{run: again}) && !s.closing.Load() {
			s.catchUpLater(c, try+1) // the connection's queue is full: later
		}
	})
}

// errConnEnded: the connection ended while messages were being queued to it.
var errConnEnded = errors.New("connection ended")

// sendAfterLimit queues stored messages of convID after seq (at most limit, 0
// for all) to c, waiting for room. It says how many it sent and whether
// messages remain past the limit; an error when the store did not answer
// (those sent before it stand) or errConnEnded.
func (s *Service) sendAfterLimit(c *Conn, convID string, after int64, limit int) (sent int, more bool, err error) {
	for {
		page := catchUpPage
		if limit > 0 && limit-sent < page {
			page = limit - sent
		}
		if page == 0 {
			return sent, true, nil
		}
		msgs, err := s.store.ListMessagesAfter(s.ctx, convID, after, page)
		if err == nil {
			err = s.hydrate(s.ctx, msgs)
		}
		if err != nil {
			s.log.Debug("catch-up read", "conversation", convID, "err", err)
			return sent, false, err
		}
		for _, m := range msgs {
			data, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeMessage, Message: ptr(wireMessage(m))})
			if !c.sendWait(OutFrame{Data: data, Queued: time.Now()}) {
				return sent, false, errConnEnded
			}
			c.caughtUpTo(convID, m.SeqNo)
			after = m.SeqNo
			sent++
		}
		if len(msgs) < page {
			return sent, false, nil
		}
	}
}

// HandleFrame serves one decoded frame from a connection. Answers and errors go to
// the connection; nothing here blocks the read loop for long.
func (s *Service) HandleFrame(c *Conn, f wire.Frame) {
	s.metrics.FramesIn.WithLabelValues(f.Type).Inc()
	switch f.Type {
	case wire.TypeSend, wire.TypeAck, wire.TypeRead, wire.TypeSync:
		// Boundaries and syncs run on the worker too: after the sends queued before them.
		if !s.enqueue(c, request{frame: f}) {
			msg := "too many requests in flight; retry"
			if f.Type == wire.TypeSend {
				msg = "too many requests in flight on this connection; retry after the hint"
			}
			s.reply(c, wire.Frame{Type: wire.TypeError, ID: f.ID, Error: &wire.Error{Code: wire.CodeOverloaded, Message: msg, RetryAfterMs: 200}})
		}
	case wire.TypePing:
		s.reply(c, wire.Frame{Type: wire.TypePong, ID: f.ID})
	default:
		s.reply(c, wire.ErrorFrame(f.ID, wire.Errorf(wire.CodeInvalid, "a client cannot send %q frames", f.Type)))
	}
}

// syncLimit bounds how many messages one sync answer carries.
const syncLimit = 1000

func (s *Service) sync(c *Conn, f wire.Frame) {
	more := false
	budget := syncLimit
	for _, cur := range f.Cursors {
		if budget <= 0 {
			more = true
			break
		}
		members, err := s.memberIDs(s.ctx, cur.ConversationID)
		if err != nil && !errors.Is(err, ErrNotFound) && wire.AsError(err).Code != wire.CodeNotFound {
			s.syncFailed(c, f.ID, err)
			return
		}
		if !slices.Contains(members, c.UserID) {
			s.reply(c, wire.ErrorFrame(f.ID, wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", cur.ConversationID)))
			continue
		}
		sent, m, err := s.sendAfterLimit(c, cur.ConversationID, cur.SeqNo, budget)
		if errors.Is(err, errConnEnded) {
			return
		}
		if err != nil {
			s.syncFailed(c, f.ID, err)
			return
		}
		more = more || m
		budget -= sent
	}
	s.reply(c, wire.Frame{Type: wire.TypeSynced, ID: f.ID, More: more})
}

// syncFailed ends a sync the store could not serve. It must not look complete:
// a client takes a complete sync to mean that whatever it lacks below its
// newest message does not exist, and would skip past messages it never got.
// So the answer is an error (with a retry hint) and then "synced" with more
// set: sync again (from where you are now).
func (s *Service) syncFailed(c *Conn, id string, err error) {
	s.reply(c, wire.ErrorFrame(id, s.internal("sync", err)))
	s.reply(c, wire.Frame{Type: wire.TypeSynced, ID: id, More: true})
}

// reply queues an answer to a request; answers wait for room rather than drop.
func (s *Service) reply(c *Conn, f wire.Frame) {
	data, err := wire.EncodeFrame(f)
	if err != nil {
		s.log.Error("encode reply", "type", f.Type, "err", err)
		return
	}
	c.sendWait(OutFrame{Data: data, Queued: time.Now()})
}

// MarkDelivered moves the user's last_delivered_seq forward (a cumulative ack).
func (s *Service) MarkDelivered(ctx context.Context, userID, convID string, seq int64) (wire.MemberStatus, error) {
	return s.advance(ctx, userID, convID, seq, 0, nil)
}

// MarkRead moves the user's last_read_seq (and with it last_delivered_seq) forward.
func (s *Service) MarkRead(ctx context.Context, userID, convID string, seq int64) (wire.MemberStatus, error) {
	return s.advance(ctx, userID, convID, 0, seq, nil)
}

// advance moves userID's boundaries; from, when set, is the connection that asked,
// which is left out of the status push.
func (s *Service) advance(ctx context.Context, userID, convID string, delivered, read int64, from *Conn) (wire.MemberStatus, error) {
	if delivered < 0 || read < 0 || delivered == 0 && read == 0 {
		return wire.MemberStatus{}, wire.Errorf(wire.CodeInvalid, "seq_no must be a positive integer")
	}
	if err := wire.ValidateConversationID(convID); err != nil {
		return wire.MemberStatus{}, err
	}
	members, err := s.memberIDs(ctx, convID)
	if err != nil {
		return wire.MemberStatus{}, err
	}
	if !slices.Contains(members, userID) {
		return wire.MemberStatus{}, wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", convID)
	}
	// A boundary never passes the last stored message: a client claiming more would
	// mark messages delivered before they exist.
	if top := max(delivered, read); top > s.lastSeq.get(convID) {
		c, err := s.store.GetConversation(ctx, convID)
		if err != nil {
			return wire.MemberStatus{}, s.notFoundOr(err, "conversation", convID)
		}
		s.lastSeq.raise(convID, c.LastSeq)
		delivered, read = min(delivered, c.LastSeq), min(read, c.LastSeq)
		if delivered == 0 && read == 0 {
			return wire.MemberStatus{UserID: userID}, nil
		}
	}
	st, changed, err := s.store.AdvanceStatus(ctx, userID, convID, delivered, read)
	if err != nil {
		return wire.MemberStatus{}, s.internal("update status", err)
	}
	ms := wire.MemberStatus{UserID: userID, LastDeliveredSeq: st.LastDeliveredSeq, LastReadSeq: st.LastReadSeq}
	if changed {
		// Every member's devices (the user's other devices too) see the boundary
		// move: ticks change live, and the other devices clear their unread counts.
		s.push(ctx, members, wire.Frame{Type: wire.TypeStatus, ConversationID: convID, Status: &ms}, from)
	}
	return ms, nil
}

// History returns a page of messages: newest first before beforeSeq, or oldest
// first after afterSeq when afterSeq > 0.
func (s *Service) History(ctx context.Context, userID, convID string, beforeSeq, afterSeq int64, limit int) (wire.HistoryResponse, error) {
	if _, err := s.requireMember(ctx, userID, convID); err != nil {
		return wire.HistoryResponse{}, err
	}
	if limit == 0 {
		limit = wire.DefaultPageSize
	}
	if limit < 1 || limit > wire.MaxPageSize {
		return wire.HistoryResponse{}, wire.Errorf(wire.CodeInvalid, "limit must be between 1 and %d", wire.MaxPageSize)
	}
	if beforeSeq < 0 || afterSeq < 0 {
		return wire.HistoryResponse{}, wire.Errorf(wire.CodeInvalid, "before_seq and after_seq must not be negative")
	}
	if beforeSeq > 0 && afterSeq > 0 {
		return wire.HistoryResponse{}, wire.Errorf(wire.CodeInvalid, "give before_seq or after_seq, not both")
	}
	var msgs []Message
	var err error
	if afterSeq > 0 {
		msgs, err = s.store.ListMessagesAfter(ctx, convID, afterSeq, limit)
	} else {
		msgs, err = s.store.ListMessages(ctx, convID, beforeSeq, limit)
	}
	if err == nil {
		err = s.hydrate(ctx, msgs)
	}
	if err != nil {
		return wire.HistoryResponse{}, s.internal("read history", err)
	}
	resp := wire.HistoryResponse{ConversationID: convID, Messages: make([]wire.Message, 0, len(msgs))}
	for _, m := range msgs {
		resp.Messages = append(resp.Messages, wireMessage(m))
	}
	if afterSeq == 0 && len(msgs) == limit && msgs[len(msgs)-1].SeqNo > 1 {
		resp.NextBeforeSeq = msgs[len(msgs)-1].SeqNo
	}
	return resp, nil
}

// Status returns every member's boundaries in a conversation.
func (s *Service) Status(ctx context.Context, userID, convID string) (wire.StatusResponse, error) {
	if _, err := s.requireMember(ctx, userID, convID); err != nil {
		return wire.StatusResponse{}, err
	}
	c, err := s.store.GetConversation(ctx, convID)
	if err != nil {
		return wire.StatusResponse{}, s.notFoundOr(err, "conversation", convID)
	}
	members, err := s.memberIDs(ctx, convID)
	if err != nil {
		return wire.StatusResponse{}, err
	}
	sts, err := s.store.ListStatuses(ctx, convID, members)
	if err != nil {
		return wire.StatusResponse{}, s.internal("read status", err)
	}
	resp := wire.StatusResponse{ConversationID: convID, LastSeq: c.LastSeq}
	for _, st := range sts {
		resp.Members = append(resp.Members, wire.MemberStatus{UserID: st.UserID, LastDeliveredSeq: st.LastDeliveredSeq, LastReadSeq: st.LastReadSeq})
	}
	return resp, nil
}

// Inbox lists the user's conversations by recent activity: from the inbox index
// when it is warm, else from the store's participants index (which then warms it).
func (s *Service) Inbox(ctx context.Context, userID string, limit int) (wire.InboxResponse, error) {
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 500 {
		return wire.InboxResponse{}, wire.Errorf(wire.CodeInvalid, "limit must be between 1 and 500")
	}
	var entries []InboxEntry
	ids, err := s.cfg.Inbox.Top(ctx, userID, limit)
	if err == nil {
		entries, err = s.store.InboxEntries(ctx, userID, ids)
		if err != nil {
			return wire.InboxResponse{}, s.internal("read inbox", err)
		}
	} else {
		if !errors.Is(err, ErrCold) {
			s.metrics.Fallbacks.WithLabelValues("inbox_index").Inc()
		}
		entries, err = s.store.Inbox(ctx, userID, limit)
		if err != nil {
			return wire.InboxResponse{}, s.internal("read inbox", err)
		}
		if ferr := s.cfg.Inbox.Fill(ctx, userID, entries); ferr != nil {
			s.log.Debug("inbox fill", "err", ferr)
		}
	}
	unread := s.countUnread(ctx, entries)
	resp := wire.InboxResponse{Conversations: make([]wire.InboxEntry, 0, len(entries))}
	for i, e := range entries {
		c := e.Conversation
		we := wire.InboxEntry{ConversationID: c.ID, Type: c.Type, Name: c.Name, LastSeq: c.LastSeq,
			LastMessageBody: c.LastMessageBody, LastMessageSender: c.LastMessageSender, LastMessageAt: c.LastMessageAt,
			LastDeliveredSeq: e.Status.LastDeliveredSeq, LastReadSeq: e.Status.LastReadSeq, Unread: unread[i]}
		if a, b, ok := wire.DirectMembers(c.ID); ok {
			we.Peer = a
			if a == userID {
				we.Peer = b
			}
		}
		resp.Conversations = append(resp.Conversations, we)
	}
	return resp, nil
}

// countUnread counts each entry's stored messages after the user's read
// boundary, up to wire.MaxUnread. seq_no arithmetic would count the gaps that
// failed writes leave (a number taken, the write refused) as unread messages.
// Entries with nothing after the boundary cost no count; the others are
// counted a few at a time. A count that fails falls back to the arithmetic.
func (s *Service) countUnread(ctx context.Context, entries []InboxEntry) []int64 {
	out := make([]int64, len(entries))
	var g errgroup.Group
	g.SetLimit(8)
	for i, e := range entries {
		last, read := e.Conversation.LastSeq, e.Status.LastReadSeq
		if last <= read {
			continue
		}
		g.Go(func() error {
			n, err := s.store.CountMessages(ctx, e.Conversation.ID, read, last, wire.MaxUnread)
			if err != nil {
				s.metrics.Fallbacks.WithLabelValues("unread_count").Inc()
				out[i] = min(last-read, wire.MaxUnread)
				return nil
			}
			out[i] = int64(n)
			return nil
		})
	}
	g.Wait()
	return out
}

// Online reports whether the user has a live connection on this node.
func (s *Service) Online(userID string) bool { return s.hub.online(userID) }

// ConnCount is the number of live connections on this node.
func (s *Service) ConnCount() int64 { return s.hub.count.Load() }

// Reject answers a frame the transport could not decode.
func (s *Service) Reject(c *Conn, id string, err error) {
	s.metrics.FramesIn.WithLabelValues("invalid").Inc()
	s.reply(c, wire.ErrorFrame(id, err))
}

// Metrics returns the Service's collectors (the transport records socket timings).
func (s *Service) Metrics() *Metrics { return s.metrics }
