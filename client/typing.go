package client

import (
	"sync"
	"time"

	"github.com/chatterm/chat/wire"
)

// TypingEvery is how often a client tells a conversation its user is still
// typing; a UI shows "typing" for TypingShownFor after the last one, so one
// lost or late frame does not blink it off.
const (
	TypingEvery    = 3 * time.Second
	TypingShownFor = 5 * time.Second
)

// typingSent remembers when each conversation was last told, so a UI can call
// Typing on every keystroke.
type typingSent struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Typing tells the other members of conversationID that the user is typing,
// at most once per TypingEvery; the UI calls it on every keystroke. It never
// blocks and never fails: offline, or with the connection's queue full, the
// frame is dropped (it is only a hint, and stale once sent late).
func (s *Session) Typing(conversationID string) {
	now := time.Now()
	s.typing.mu.Lock()
	if s.typing.last == nil {
		s.typing.last = map[string]time.Time{}
	}
	if now.Sub(s.typing.last[conversationID]) < TypingEvery {
		s.typing.mu.Unlock()
		return
	}
	s.typing.last[conversationID] = now
	s.typing.mu.Unlock()
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l == nil {
		return
	}
	select {
	case l.out <- wire.Frame{Type: wire.TypeTyping, ConversationID: conversationID}:
	default: // the connection is busy: the hint is dropped
	}
}
