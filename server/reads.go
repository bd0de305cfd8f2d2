package server

import (
	"context"
	"errors"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// MarkDelivered moves the user's last_delivered_seq forward (a cumulative ack).
func (s *Service) MarkDelivered(ctx context.Context, userID, convID string, seq int64) (wire.MemberStatus, error) {
	return s.Advance(ctx, userID, convID, seq, 0, nil)
}

// MarkRead moves the user's last_read_seq (and with it last_delivered_seq) forward.
func (s *Service) MarkRead(ctx context.Context, userID, convID string, seq int64) (wire.MemberStatus, error) {
	return s.Advance(ctx, userID, convID, 0, seq, nil)
}

// Advance moves userID's boundaries; from, when set, is the connection that asked,
// which is left out of the status push.
func (s *Service) Advance(ctx context.Context, userID, convID string, delivered, read int64, from *conn.Conn) (wire.MemberStatus, error) {
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
	if err := s.allow(ctx, "history", userID, s.cfg.Limits.History); err != nil {
		return wire.HistoryResponse{}, err
	}
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
	if err := s.allow(ctx, "inbox", userID, s.cfg.Limits.Inbox); err != nil {
		return wire.InboxResponse{}, err
	}
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 500 {
		return wire.InboxResponse{}, wire.Errorf(wire.CodeInvalid, "limit must be between 1 and 500")
	}
	var entries []InboxEntry
	var complete bool // every conversation of the user is in entries
	ids, err := s.cfg.Inbox.Top(ctx, userID, limit)
	if err == nil {
		entries, err = s.store.InboxEntries(ctx, userID, ids)
		if err != nil {
			if resp, ok := s.inboxFromCopy(ctx, userID, limit, err); ok {
				return resp, nil
			}
			return wire.InboxResponse{}, s.internal("read inbox", err)
		}
		complete = len(ids) < limit
	} else {
		if !errors.Is(err, ErrCold) {
			s.metrics.Fallbacks.WithLabelValues("inbox_index").Inc()
		}
		entries, err = s.store.Inbox(ctx, userID, limit)
		if err != nil {
			if resp, ok := s.inboxFromCopy(ctx, userID, limit, err); ok {
				return resp, nil
			}
			return wire.InboxResponse{}, s.internal("read inbox", err)
		}
		complete = len(entries) < limit
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
			LastDeliveredSeq: e.Status.LastDeliveredSeq, LastReadSeq: e.Status.LastReadSeq, Unread: unread[i],
			Mentions: unreadMentions(e.MentionSeqs, e.Status.LastReadSeq)}
		if a, b, ok := wire.DirectMembers(c.ID); ok {
			we.Peer = a
			if a == userID {
				we.Peer = b
			}
		}
		resp.Conversations = append(resp.Conversations, we)
	}
	s.saveInboxCopy(ctx, userID, resp, complete)
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
func (s *Service) Online(userID string) bool { return s.hub.Online(userID) }

// ConnCount is the number of live connections on this node.
func (s *Service) ConnCount() int64 { return s.hub.Count() }

// Metrics returns the Service's collectors (the transport records socket timings).
func (s *Service) Metrics() *Metrics { return s.metrics }
