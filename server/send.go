package server

import (
	"context"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/chatterm/chat/wire"
)

// maxSeqRetries bounds re-seeding after seq_no collisions within one send.
const maxSeqRetries = 5

// Send stores a message and delivers it (seeds 001–004). It answers only once the
// message is durable. A resend of a stored message_id returns the first answer
// with created=false and stores nothing. from is the sending connection (nil for
// HTTP), which gets the "sent" answer instead of a copy of the message.
func (s *Service) Send(ctx context.Context, userID, convID string, req wire.SendRequest, from *Conn) (wire.SendResponse, bool, error) {
	start := time.Now()
	if err := wire.ValidateConversationID(convID); err != nil {
		return wire.SendResponse{}, false, err
	}
	if err := wire.ValidateMessageID(req.MessageID); err != nil {
		return wire.SendResponse{}, false, err
	}
	if req.Content == "" && req.Attachment == "" {
		return wire.SendResponse{}, false, wire.Errorf(wire.CodeInvalid, "content is empty")
	}
	if req.Attachment != "" {
		if err := wire.ValidateMediaID(req.Attachment); err != nil {
			return wire.SendResponse{}, false, err
		}
		if wire.MediaOwner(req.Attachment) != userID {
			return wire.SendResponse{}, false, wire.Errorf(wire.CodeForbidden, "attachment %s was uploaded by someone else; upload your own copy", req.Attachment)
		}
	}
	if len(req.Content) > s.cfg.MaxMessageBytes {
		return wire.SendResponse{}, false, wire.Errorf(wire.CodeTooLarge, "message is %d bytes; the limit is %d", len(req.Content), s.cfg.MaxMessageBytes)
	}
	if !utf8.ValidString(req.Content) {
		return wire.SendResponse{}, false, wire.Errorf(wire.CodeInvalid, "content is not valid UTF-8")
	}
	if s.cfg.SendRate > 0 {
		ok, retry, err := s.cfg.Rate.Allow(ctx, "send:"+userID, s.cfg.SendRate)
		if err != nil {
			// Seed 003: rate limiting fails open; losing it briefly beats blocking sends.
			s.metrics.Fallbacks.WithLabelValues("rate_limit").Inc()
		} else if !ok {
			s.metrics.RateLimited.Inc()
			return wire.SendResponse{}, false, &wire.Error{Code: wire.CodeRateLimited,
				Message: "sending too fast; retry after the hint", RetryAfterMs: max(retry.Milliseconds(), 1)}
		}
	}
	members, err := s.memberIDs(ctx, convID)
	if err != nil {
		return wire.SendResponse{}, false, err
	}
	if !slices.Contains(members, userID) {
		return wire.SendResponse{}, false, wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", convID)
	}
	if !s.begin() {
		return wire.SendResponse{}, false, &wire.Error{Code: wire.CodeUnavailable, Message: "server is shutting down; retry on reconnect", RetryAfterMs: 1000}
	}
	defer s.wg.Done()
	// Seed 003's bounded queue: past the bound a send is refused at once with a
	// retry hint instead of queueing behind a slow store.
	if n := s.inFlight.Add(1); n > int64(s.cfg.MaxInFlight) {
		s.inFlight.Add(-1)
		s.metrics.Overloaded.Inc()
		return wire.SendResponse{}, false, &wire.Error{Code: wire.CodeOverloaded, Message: "server is overloaded; retry after the hint", RetryAfterMs: 500}
	}
	defer s.inFlight.Add(-1)

	if !isGroup(convID) && !s.lastSeq.known(convID) {
		// A direct conversation is created by its first message. Checking before a
		// seq_no is taken keeps that message at seq 1.
		a, b, _ := wire.DirectMembers(convID)
		peer := a
		if peer == userID {
			peer = b
		}
		if _, _, err := s.ensureDirect(ctx, userID, peer); err != nil {
			return wire.SendResponse{}, false, err
		}
		s.lastSeq.raise(convID, 0)
	}
	m, created, err := s.store1(ctx, userID, convID, members, req, from)
	if errors.Is(err, ErrNotFound) {
		return wire.SendResponse{}, false, wire.Errorf(wire.CodeNotFound, "no conversation %s", convID)
	}
	if err != nil {
		return wire.SendResponse{}, false, s.internal("store message", err)
	}
	resp := wire.SendResponse{ConversationID: m.ConversationID, SeqNo: m.SeqNo, MessageID: m.MessageID, Timestamp: m.Timestamp}
	if !created {
		s.metrics.Duplicates.Inc()
		return resp, false, nil
	}
	s.metrics.MessagesStored.Inc()
	s.metrics.SendDuration.Observe(time.Since(start).Seconds())
	if err := s.cfg.Inbox.Touch(ctx, members, convID, m.Timestamp); err != nil {
		s.metrics.Fallbacks.WithLabelValues("inbox_touch").Inc()
	}
	return resp, true, nil
}

// store1 assigns a seq_no and stores the message under the conversation's lock,
// then hands it to the members' connections before releasing the lock, so every
// connection sees a conversation's messages in seq order.
func (s *Service) store1(ctx context.Context, userID, convID string, members []string, req wire.SendRequest, from *Conn) (Message, bool, error) {
	mu := s.locks.lock(convID)
	defer mu.Unlock()
	m := Message{ConversationID: convID, MessageID: req.MessageID, SenderID: userID, Content: req.Content, Attachment: req.Attachment,
		Timestamp: s.cfg.Now().UTC().Truncate(time.Microsecond)}
	receivers := make([]string, 0, len(members)-1)
	for _, u := range members {
		if u != userID {
			receivers = append(receivers, u)
		}
	}
	if len(receivers) == 1 && !isGroup(convID) {
		m.ReceiverID = receivers[0]
	}
	for attempt := 0; ; attempt++ {
		seq, err := s.nextSeq(ctx, convID)
		if err != nil {
			return m, false, err
		}
		m.SeqNo = seq
		err = s.store.AppendMessage(ctx, m, receivers)
		var dup *DuplicateError
		switch {
		case err == nil:
			s.lastSeq.raise(convID, seq)
			s.fanout(ctx, m, members, from)
			return m, true, nil
		case errors.As(err, &dup):
			return dup.Original, false, nil
		case errors.Is(err, ErrSeqTaken) && attempt < maxSeqRetries:
			// The counter is behind the table (Redis lost it): re-seed from the
			// stored last_seq and take a new number. Nothing was overwritten.
			c, gerr := s.store.GetConversation(ctx, convID)
			if gerr != nil {
				return m, false, gerr
			}
			if rerr := s.cfg.Sequencer.Reseed(ctx, convID, c.LastSeq); rerr != nil {
				s.log.Warn("reseed sequencer", "conversation", convID, "err", rerr)
			}
			s.metrics.Fallbacks.WithLabelValues("seq_reseed").Inc()
		default:
			return m, false, err
		}
	}
}

// nextSeq takes a number from the Sequencer, or, when it fails, from the counter
// on the conversation item (strict order kept while Redis is down).
func (s *Service) nextSeq(ctx context.Context, convID string) (int64, error) {
	seq, err := s.cfg.Sequencer.Next(ctx, convID)
	if err == nil {
		return seq, nil
	}
	s.metrics.Fallbacks.WithLabelValues("sequencer").Inc()
	s.log.Debug("sequencer failed, using the store counter", "conversation", convID, "err", err)
	return s.store.NextSeq(ctx, convID)
}

// fanout delivers a stored message to every connection of every member, on this
// node and (through the registry and broker) on others; the sending connection
// is skipped, since it gets the "sent" answer.
func (s *Service) fanout(ctx context.Context, m Message, members []string, from *Conn) {
	f := wire.Frame{Type: wire.TypeMessage, Message: ptr(wireMessage(m))}
	online := s.push(ctx, members, f, from)
	if s.cfg.Pusher == nil || online == nil {
		return
	}
	for _, u := range members {
		if u == m.SenderID || online[u] {
			continue
		}
		n := Notification{UserID: u, ConversationID: m.ConversationID, SeqNo: m.SeqNo, SenderID: m.SenderID, Preview: preview(m.Content)}
		if err := s.cfg.Pusher.Push(ctx, n); err != nil {
			s.metrics.Fallbacks.WithLabelValues("push").Inc()
			s.log.Debug("push", "user", u, "err", err)
		}
	}
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
// returns the users known to be online (nil when the registry could not say).
func (s *Service) push(ctx context.Context, users []string, f wire.Frame, skip *Conn) map[string]bool {
	data, err := wire.EncodeFrame(f)
	if err != nil {
		s.log.Error("encode frame", "type", f.Type, "err", err)
		return nil
	}
	s.hub.deliver(users, OutFrame{Data: data, Queued: time.Now(), Message: f.Type == wire.TypeMessage}, skip)
	nodes, err := s.cfg.Registry.Nodes(ctx, users)
	if err != nil {
		// A registry we cannot read means remote users count as offline: their
		// pending_deliveries rows bring them the message on reconnect.
		s.metrics.Fallbacks.WithLabelValues("registry").Inc()
		return nil
	}
	online := make(map[string]bool, len(nodes))
	byNode := map[string][]string{}
	for u, ns := range nodes {
		online[u] = len(ns) > 0
		for _, n := range ns {
			if n != s.cfg.NodeID {
				byNode[n] = append(byNode[n], u)
			}
		}
	}
	for n, us := range byNode {
		if err := s.cfg.Broker.Publish(ctx, n, Envelope{UserIDs: us, Frame: data}); err != nil {
			s.metrics.Fallbacks.WithLabelValues("broker").Inc()
			s.log.Debug("publish to node", "node", n, "err", err)
		}
	}
	return online
}

// wireMessage is a stored message as clients see it.
func wireMessage(m Message) wire.Message {
	return wire.Message{ConversationID: m.ConversationID, SeqNo: m.SeqNo, MessageID: m.MessageID, SenderID: m.SenderID,
		Content: m.Content, Attachment: m.Attachment, Timestamp: m.Timestamp}
}
