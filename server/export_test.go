package server

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// LockConversation holds a conversation's send lock, so tests can keep sends in
// flight deterministically.
func (s *Service) LockConversation(id string) (unlock func()) {
	m := s.locks.lock(id)
	return m.Unlock
}

// InFlight is the number of admitted sends not yet answered.
func (s *Service) InFlight() int64 { return s.inFlight.Load() }

// SendBatch is sendMany for tests: the errors of each message, in order.
func (s *Service) SendBatch(ctx context.Context, userID, convID string, reqs []wire.SendRequest) []error {
	var errs []error
	for _, r := range s.SendMany(ctx, userID, convID, reqs, nil) {
		errs = append(errs, r.Err)
	}
	return errs
}

// SetArchiveStepHook has f called between the archiver's writes ("mark":
// after a row's blob is written, before its content leaves the table;
// "advance": before a conversation's watermark moves), so a test can kill
// the archiver there by cancelling its context.
func (s *Service) SetArchiveStepHook(f func(step string)) { s.archiveStepHook = f }
