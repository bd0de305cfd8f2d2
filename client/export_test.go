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
