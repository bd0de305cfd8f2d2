package client

import (
	"context"
	"fmt"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// Sending: the durable outbox, resends with the original message_id, and the
// waiters of Send.

type sendResult struct {
	resp wire.SendResponse
	err  error
}

// resendOutbox sends every unsent message with its original message_id; the
// server stores each once however often it arrives.
func (s *Session) resendOutbox(ctx context.Context, l *link) error {
	entries, err := s.store.Outbox(ctx, "")
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		s.log.Info("resending the outbox", "entries", len(entries))
	}
	for _, e := range entries {
		if e.Err != nil {
			continue
		}
		if s.cfg.Filter != nil && !s.cfg.Filter(e.ConversationID) {
			continue
		}
		s.sendOn(ctx, l, e, false) // it may have reached the server before
	}
	return nil
}

// sendOn sends an outbox entry on a connection unless it already went there;
// first says no earlier try of it went out (wire.SendRequest.FirstTry). The
// conversation's waiting ack goes with it.
func (s *Session) sendOn(ctx context.Context, l *link, e localstore.OutboxEntry, first bool) {
	s.mu.Lock()
	if l.sent[e.MessageID] {
		s.mu.Unlock()
		return
	}
	l.sent[e.MessageID] = true
	s.mu.Unlock()
	if !l.push(ctx, wire.Frame{Type: wire.TypeSend, ID: e.MessageID, ConversationID: e.ConversationID,
		MessageID: e.MessageID, Content: e.Content, Attachment: e.Attachment, AttachmentInfo: e.AttachmentInfo,
		Kind: e.Kind, TargetSeq: e.TargetSeq, ReplyTo: e.ReplyTo, FirstTry: first, AckSeq: l.takeAck(e.ConversationID)}) {
		s.mu.Lock()
		delete(l.sent, e.MessageID)
		s.mu.Unlock()
	}
}

func (s *Session) outboxConversation(ctx context.Context, messageID string) (string, error) {
	es, err := s.store.Outbox(ctx, "")
	if err != nil {
		return "", err
	}
	for _, e := range es {
		if e.MessageID == messageID {
			return e.ConversationID, nil
		}
	}
	return "", localstore.ErrNotFound
}

func (s *Session) retrySend(messageID string) {
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l == nil {
		return // the next connection resends the whole outbox
	}
	es, err := s.store.Outbox(l.ctx, "")
	if err != nil {
		return
	}
	for _, e := range es {
		if e.MessageID == messageID && e.Err == nil {
			s.sendOn(l.ctx, l, e, false)
		}
	}
}

func (s *Session) resolve(messageID string, r sendResult) {
	s.mu.Lock()
	ws := s.waiters[messageID]
	delete(s.waiters, messageID)
	s.mu.Unlock()
	for _, w := range ws {
		w <- r
	}
}

// Enqueue queues a message and returns at once: the outbox entry is durable
// before it returns, and the message goes out now if connected, else on the
// next connect. The returned message has seq_no 0 (pending) and the local
// time; a SentEvent follows when the server stored it.
func (s *Session) Enqueue(ctx context.Context, conversationID, content string) (wire.Message, error) {
	return s.EnqueueID(ctx, conversationID, wire.NewMessageID(), content)
}

// EnqueueID is Enqueue with the caller's message_id (idempotent: the same id and
// content again is the same message).
func (s *Session) EnqueueID(ctx context.Context, conversationID, messageID, content string) (wire.Message, error) {
	return s.EnqueueMessage(ctx, wire.Message{ConversationID: conversationID, MessageID: messageID, Content: content})
}

// EnqueueMessage is Enqueue for a message with an attachment (a media_id from
// API.UploadMedia; the content may then be empty). An empty MessageID gets a
// fresh one.
func (s *Session) EnqueueMessage(ctx context.Context, m wire.Message) (wire.Message, error) {
	if m.MessageID == "" {
		m.MessageID = wire.NewMessageID()
	}
	conversationID, messageID, content := m.ConversationID, m.MessageID, m.Content
	s.sendMu.Lock()
	e, err := s.store.EnqueueEntry(ctx, localstore.OutboxEntry{ConversationID: conversationID, MessageID: messageID,
		Content: content, Attachment: m.Attachment, AttachmentInfo: m.AttachmentInfo, Kind: m.Kind, TargetSeq: m.TargetSeq, ReplyTo: m.ReplyTo})
	if err != nil {
		s.sendMu.Unlock()
		return wire.Message{}, err
	}
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l != nil {
		s.sendOn(ctx, l, e, e.Fresh)
	}
	s.sendMu.Unlock()
	if l == nil {
		s.RetryNow()
	}
	s.refreshUnsent(ctx)
	return wire.Message{ConversationID: conversationID, MessageID: messageID, SenderID: s.self, Content: content,
		Attachment: e.Attachment, AttachmentInfo: e.AttachmentInfo, Kind: e.Kind, TargetSeq: e.TargetSeq, ReplyTo: e.ReplyTo, Timestamp: e.CreatedAt}, nil
}

// Send queues a message like Enqueue and waits until the server has stored it
// (or refused it for good, or ctx ends; the message then stays queued).
func (s *Session) Send(ctx context.Context, conversationID, content string) (wire.SendResponse, error) {
	return s.SendID(ctx, conversationID, wire.NewMessageID(), content)
}

// SendID is Send with the caller's message_id.
func (s *Session) SendID(ctx context.Context, conversationID, messageID, content string) (wire.SendResponse, error) {
	return s.SendMessage(ctx, wire.Message{ConversationID: conversationID, MessageID: messageID, Content: content})
}

// SendMessage is Send for a message that may carry an attachment; an empty
// MessageID gets a fresh one.
func (s *Session) SendMessage(ctx context.Context, m wire.Message) (wire.SendResponse, error) {
	if m.MessageID == "" {
		m.MessageID = wire.NewMessageID()
	}
	messageID := m.MessageID
	w := make(chan sendResult, 1)
	s.mu.Lock()
	s.waiters[messageID] = append(s.waiters[messageID], w)
	s.mu.Unlock()
	if _, err := s.EnqueueMessage(ctx, m); err != nil {
		s.dropWaiter(messageID, w)
		return wire.SendResponse{}, err
	}
	select {
	case r := <-w:
		return r.resp, r.err
	case <-ctx.Done():
		s.dropWaiter(messageID, w)
		return wire.SendResponse{}, fmt.Errorf("message %s is queued, not yet stored: %w", messageID, ctx.Err())
	}
}

func (s *Session) dropWaiter(messageID string, w chan sendResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.waiters[messageID]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(s.waiters, messageID)
	} else {
		s.waiters[messageID] = ws
	}
}
