package server

// LockConversation holds a conversation's send lock, so tests can keep sends in
// flight deterministically.
func (s *Service) LockConversation(id string) (unlock func()) {
	m := s.locks.lock(id)
	return m.Unlock
}

// InFlight is the number of admitted sends not yet answered.
func (s *Service) InFlight() int64 { return s.inFlight.Load() }
