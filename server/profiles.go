package server

import (
	"context"
	"slices"

	"github.com/chatterm/chat/wire"
)

// profileReach is how many of a user's conversations, most recent activity
// first, hear of a change to their profile: a profile frame goes to their
// members' open connections. Members of conversations past it see the new
// name when their client next asks for the profile.
const profileReach = 500

// announceProfile pushes a profile frame to the user's open connections and
// to those of everyone who shares one of the user's conversations with them
// (up to profileReach conversations), on every node. It is best effort, as a
// typing frame is: a client that misses it shows the old name until it asks
// again (on its next start, or when it next loads the profile).
func (s *Service) announceProfile(ctx context.Context, p wire.Profile) {
	entries, err := s.store.Inbox(ctx, p.UserID, profileReach)
	if err != nil {
		s.log.Warn("profile change: list conversations", "user", p.UserID, "err", err)
		return
	}
	users := []string{p.UserID}
	for _, e := range entries {
		members, err := s.memberIDs(ctx, e.Conversation.ID)
		if err != nil {
			s.log.Warn("profile change: list members", "conversation", e.Conversation.ID, "err", err)
			continue
		}
		users = append(users, members...)
	}
	slices.Sort(users)
	users = slices.Compact(users)
	s.push(ctx, users, wire.Frame{Type: wire.TypeProfile, Profile: &p}, nil)
}
