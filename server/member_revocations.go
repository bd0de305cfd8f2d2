package server

import (
	"context"
	"errors"
)

// onRevocation is the Revocations handler: tokens to the token cache,
// conversations whose members changed to the member cache.
func (s *Service) onRevocation(r Revocation) {
	if s.tokens != nil {
		s.tokens.revoke(r)
	}
	s.members.revoke(r)
}

// revokeMembers tells every node's member cache that convID's members
// changed: this node's at once, the others' through the revocation channel,
// so that none answers typing or presence past the change from its cache, in
// an outage least of all (caches.go). A publish that fails leaves the other
// nodes a list out of date for at most its TTL (5 s) while the store answers,
// and for the outage's length if one begins within it (docs/reliability.md).
func (s *Service) revokeMembers(ctx context.Context, convID string) {
	r := Revocation{Conversations: []string{convID}}
	s.members.revoke(r)
	if s.cfg.Revocations == nil {
		return
	}
	if err := s.cfg.Revocations.Publish(ctx, r); err != nil {
		s.metrics.Fallbacks.WithLabelValues("revocations").Inc()
		s.log.Warn("membership change not published: other nodes may use the old member list from their caches for up to its TTL",
			"conversation", convID, "err", err)
	}
}

// staleMembers answers a conversation's members from the member cache past
// its TTL when the store's read failed with an outage (err).
func (s *Service) staleMembers(convID string, err error) ([]string, bool) {
	if !errors.Is(err, ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		return nil, false
	}
	users, ok := s.members.getStale(convID)
	if ok {
		s.metrics.Fallbacks.WithLabelValues("member_cache").Inc()
	}
	return users, ok
}
