package server

import (
	"errors"
	"fmt"
)

// Errors that store implementations return (wrapped or bare); the Service turns
// them into wire errors. Keeping them here, not in wire, lets stores stay ignorant
// of the protocol.
var (
	ErrNotFound  = errors.New("not found")
	ErrExists    = errors.New("already exists")
	ErrNotFirst  = errors.New("the server already has its first account")
	ErrBadInvite = errors.New("invite code unknown, used or expired")
	// ErrSeqTaken: a message with this (conversation_id, seq_no) already exists. The
	// counter was behind (Redis lost it, or a fallback counter ran): re-seed and retry.
	ErrSeqTaken = errors.New("seq_no already taken")
	// ErrUnavailable: a backing service failed (down, hung, its circuit open),
	// not the request on its merits. The backend's breaker logs the outage once;
	// the Service answers each such request with a retry hint and no log line.
	// Backends' own sentinels wrap it.
	ErrUnavailable = errors.New("a backing service is unavailable")
	// ErrNotApplied marks a failed write that certainly changed nothing (the
	// circuit was open, the connection was refused). A write that failed
	// without it may have been applied: a send is then answered maybe_stored,
	// and its resend with the same message_id is stored once.
	ErrNotApplied = errors.New("nothing was written")
	// ErrRaced: a conditional write found its record changed since it was
	// read (MediaStore.ReserveMedia); read again and retry.
	ErrRaced = errors.New("the record changed since it was read")
	// ErrConfusable: a name key (User.NameKeys) is held by another account.
	ErrConfusable = errors.New("reads like another user's id or name")
	// ErrTargetChanged: an event's target is no longer what the Service
	// checked (another event changed it meanwhile, it was deleted, or it is
	// not a message); nothing was written. The Service checks again.
	ErrTargetChanged = errors.New("the event's target changed")
	// ErrNewerSchema: the store was made, or last migrated, by a newer build
	// than this one; this build must not write to it (it would not keep what
	// the newer layout needs). Run that build or a later one.
	ErrNewerSchema = errors.New("the store's schema is newer than this build knows")
)

// DuplicateError: a message with this (conversation_id, message_id) was stored
// before. Original is that message; nothing new was written.
type DuplicateError struct {
	Original Message
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("message %s already stored as seq %d", e.Original.MessageID, e.Original.SeqNo)
}
