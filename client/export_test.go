package client

import "time"

// SetReceiveHooks reports, to a test, how long each batch of incoming frames
// was held (hold.go; 0: not held) with the frames it found queued, and each
// commit of received messages with its size. Call before Run.
func SetReceiveHooks(s *Session, held func(hold time.Duration, queued int), stored func(messages int)) {
	s.heldHook, s.storedHook = held, stored
}

// SetHistoryHook runs f inside History between its read of the outbox and its
// read of the messages, where a sent answer's commit can fall.
func SetHistoryHook(s *Session, f func()) { s.historyHook = f }

// SocketReads is how many reads of the live connection's socket returned
// data, and whether the socket is wrapped to count them (readgate.go).
func SocketReads(s *Session) (reads int, gated bool) {
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l == nil || l.conn.gate == nil {
		return 0, false
	}
	g := l.conn.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reads, true
}

// LowWaterPauses is how many of the live connection's pauses raised its
// socket's receive low-water mark (readgate_lowat_linux.go).
func LowWaterPauses(s *Session) int {
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l == nil || l.conn.gate == nil {
		return 0
	}
	g := l.conn.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lowWaterPauses
}
