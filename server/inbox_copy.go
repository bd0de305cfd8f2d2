package server

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/mailru/easyjson"

	"github.com/chatterm/chat/wire"
)

// InboxCopies keeps, per user, the entries of the inbox answers the user was
// last given, so that while the store cannot be read (a DynamoDB outage) the
// inbox is answered from them, marked stale, instead of failing. It is a
// cache of answers already given to that user, keyed by the user: it never
// holds another user's view. Optional (Backends.InboxCopies): nil keeps no
// copy, and the inbox fails with the store.
//
// A conversation the user is removed from must not be shown from the copy:
// Drop takes it out and keeps it out of the Saves of answers read before the
// removal and written after it, until Rejoin (the user was added back).
type InboxCopies interface {
	// Save writes entries into userID's copy, leaving out the conversations
	// dropped since their last Rejoin. complete says the entries are every
	// conversation of the user (the answer was not cut at its limit): the
	// copy is then replaced; otherwise they are merged into it.
	Save(ctx context.Context, userID string, entries []CopiedEntry, complete bool) error
	// Load returns userID's copy, in no particular order; none when there is
	// none (never saved, expired).
	Load(ctx context.Context, userID string) ([]CopiedEntry, error)
	// Drop takes convID out of userID's copy and keeps it out of later Saves
	// until Rejoin, or for longer than any read begun before the Drop can
	// last (the implementation's bound: an hour on Redis).
	Drop(ctx context.Context, userID, convID string) error
	// Rejoin lets convID into the copies of userIDs again (they were added
	// to it), in one call.
	Rejoin(ctx context.Context, convID string, userIDs []string) error
}

// CopiedEntry is one conversation of an inbox copy: its id and the entry as
// the user was given it, encoded (the copy does not read it).
type CopiedEntry struct {
	ConvID string
	Data   []byte
}

// saveInboxCopy keeps resp, just answered from the store, as userID's copy.
// It costs one Redis call per inbox read (docs/production.md); a failure
// leaves the previous copy, which is only ever staler.
func (s *Service) saveInboxCopy(ctx context.Context, userID string, resp wire.InboxResponse, complete bool) {
	if s.cfg.InboxCopies == nil {
		return
	}
	entries := make([]CopiedEntry, 0, len(resp.Conversations))
	for _, e := range resp.Conversations {
		e.LastMessageBody = cutPreview(e.LastMessageBody)
		b, err := easyjson.Marshal(e)
		if err != nil {
			s.log.Debug("inbox copy: encode", "conversation", e.ConversationID, "err", err)
			return
		}
		entries = append(entries, CopiedEntry{ConvID: e.ConversationID, Data: b})
	}
	if err := s.cfg.InboxCopies.Save(ctx, userID, entries, complete); err != nil {
		s.log.Debug("inbox copy: save", "err", err)
	}
}

// copiedPreview bounds the last message's text an inbox copy keeps: a
// message may be 16 KiB, and 500 conversations of them would make one user's
// copy megabytes; a preview shows a line of it.
const copiedPreview = 256

// cutPreview is body cut to at most copiedPreview bytes, at a rune boundary.
func cutPreview(body string) string {
	if len(body) <= copiedPreview {
		return body
	}
	n := copiedPreview
	for n > 0 && !utf8.RuneStart(body[n]) {
		n--
	}
	return body[:n]
}

// inboxFromCopy answers the inbox from userID's copy when the store's read
// failed with an outage (err); ok is false when it did not, or there is no
// copy to answer from.
func (s *Service) inboxFromCopy(ctx context.Context, userID string, limit int, err error) (wire.InboxResponse, bool) {
	if s.cfg.InboxCopies == nil || !(errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)) {
		return wire.InboxResponse{}, false
	}
	copied, lerr := s.cfg.InboxCopies.Load(ctx, userID)
	if lerr != nil || len(copied) == 0 {
		if lerr != nil {
			s.log.Debug("inbox copy: load", "err", lerr)
		}
		return wire.InboxResponse{}, false
	}
	resp := wire.InboxResponse{Stale: true, Conversations: make([]wire.InboxEntry, 0, len(copied))}
	for _, c := range copied {
		var e wire.InboxEntry
		if easyjson.Unmarshal(c.Data, &e) != nil || e.ConversationID != c.ConvID {
			continue // what cannot be read as this entry is not shown
		}
		resp.Conversations = append(resp.Conversations, e)
	}
	// The inbox's order: most recent activity first.
	slices.SortFunc(resp.Conversations, func(a, b wire.InboxEntry) int {
		if c := b.LastMessageAt.Compare(a.LastMessageAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ConversationID, b.ConversationID)
	})
	if len(resp.Conversations) > limit {
		resp.Conversations = resp.Conversations[:limit]
	}
	s.metrics.Fallbacks.WithLabelValues("inbox_copy").Inc()
	return resp, true
}

// dropFromInboxCopy takes convID out of member's copy after the store
// removed them from it. A failed Drop is tried again until it is made
// (inbox_copy_retry.go).
func (s *Service) dropFromInboxCopy(ctx context.Context, member, convID string) {
	if s.cfg.InboxCopies == nil {
		return
	}
	if err := s.cfg.InboxCopies.Drop(ctx, member, convID); err != nil {
		s.log.Debug("inbox copy: drop failed; retrying", "user", member, "conversation", convID, "err", err)
		s.retryDrop(member, convID)
	}
}

// rejoinInboxCopies lets convID into the copies of users just added to it.
func (s *Service) rejoinInboxCopies(ctx context.Context, convID string, users []string) {
	if s.cfg.InboxCopies == nil {
		return
	}
	s.forgetDrops(convID, users)
	// A failure leaves the conversation out of their copies while its drop
	// is remembered (an implementation's bound): the copy then lacks a
	// conversation, the safe way to be wrong.
	if err := s.cfg.InboxCopies.Rejoin(ctx, convID, users); err != nil {
		s.log.Debug("inbox copy: rejoin", "conversation", convID, "err", err)
	}
}
