package server

import (
	"context"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// typingPerSecond bounds how many typing frames of one user are passed on: a
// client sends one every few seconds while its user types, so more is noise
// (or abuse) that would cost every member's devices a frame each.
const typingPerSecond = 2

// Typing tells the other members of convID that userID is composing, on this
// node and the others where they are connected. It is ephemeral: never stored,
// never pushed, not retried, and not answered; a typing frame over the limit,
// or from someone who is not a member, is dropped (the error says why, for the
// caller's log; the protocol sends it nowhere).
func (s *Service) Typing(ctx context.Context, userID, convID string, from *conn.Conn) error {
	others, err := s.othersIn(ctx, userID, convID)
	if err != nil {
		return err
	}
	ok, _, err := s.cfg.Rate.Allow(ctx, "typing:"+userID, typingPerSecond)
	if err != nil {
		s.metrics.Fallbacks.WithLabelValues("rate_limit").Inc()
		return nil // a typing frame is not worth passing on unmetered
	}
	if !ok {
		return wire.Errorf(wire.CodeRateLimited, "typing: at most %d a second", typingPerSecond)
	}
	s.push(ctx, others, wire.Frame{Type: wire.TypeTyping, ConversationID: convID, UserID: userID}, from)
	return nil
}
