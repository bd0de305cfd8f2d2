package server

import (
	"context"
	"errors"

	"github.com/chatterm/chat/wire"
)

// Public channels: groups of type wire.Channel that any account can list,
// join and leave by itself. What a member of a channel can do is what a
// member of a group can; what differs is who may become one: a group's admins
// add its members, a channel's members add themselves (and admins may add
// others too). Joining gives the history, as a member added to a group has
// it (docs/security.md).

// ChannelStore lists the server's channels without reading anything else:
// an index of channels only (server/sqlite: a partial index on the
// conversations' type; server/dynamo: a directory partition).
type ChannelStore interface {
	// ListChannels returns up to limit channels with ids above after, by id;
	// Name and Topic as they are now.
	ListChannels(ctx context.Context, after string, limit int) ([]Conversation, error)
}

// Channel listing page sizes.
const (
	defaultChannelPage = 50
	maxChannelPage     = 200
)

// ListChannels lists the server's channels to any account, a page at a time,
// saying which the caller is in.
func (s *Service) ListChannels(ctx context.Context, userID, after string, limit int) (wire.ChannelsResponse, error) {
	if after != "" {
		if err := wire.ValidateConversationID(after); err != nil {
			return wire.ChannelsResponse{}, err
		}
	}
	switch {
	case limit <= 0:
		limit = defaultChannelPage
	case limit > maxChannelPage:
		limit = maxChannelPage
	}
	if err := s.allow(ctx, "history", userID, s.cfg.Limits.History); err != nil {
		return wire.ChannelsResponse{}, err
	}
	cs, err := s.store.ListChannels(ctx, after, limit+1)
	if err != nil {
		return wire.ChannelsResponse{}, s.internal("list channels", err)
	}
	out := wire.ChannelsResponse{Channels: []wire.ChannelInfo{}}
	if len(cs) > limit {
		cs = cs[:limit]
		out.Next = cs[limit-1].ID
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	// One read for the lot: the entries of those the caller is in.
	mine, err := s.store.InboxEntries(ctx, userID, ids)
	if err != nil {
		return wire.ChannelsResponse{}, s.internal("read memberships", err)
	}
	joined := make(map[string]bool, len(mine))
	for _, e := range mine {
		joined[e.Conversation.ID] = true
	}
	for _, c := range cs {
		out.Channels = append(out.Channels, wire.ChannelInfo{ConversationID: c.ID, Name: c.Name, Topic: c.Topic, CreatedAt: c.CreatedAt, Joined: joined[c.ID]})
	}
	return out, nil
}

// JoinChannel makes userID a member of the channel convID, with a joined
// event; joining a channel one is in already changes nothing. A private
// group answers as if it did not exist: its existence is not the caller's
// to learn.
func (s *Service) JoinChannel(ctx context.Context, userID, convID string) (wire.Conversation, error) {
	if err := wire.ValidateConversationID(convID); err != nil {
		return wire.Conversation{}, err
	}
	if err := s.allow(ctx, "member", userID, s.cfg.Limits.MemberAdds); err != nil {
		return wire.Conversation{}, err
	}
	c, err := s.store.GetConversation(ctx, convID)
	if errors.Is(err, ErrNotFound) || err == nil && c.Type != wire.Channel {
		return wire.Conversation{}, wire.Errorf(wire.CodeNotFound, "no channel %s", convID)
	} else if err != nil {
		return wire.Conversation{}, s.internal("get conversation", err)
	}
	if _, err := s.store.GetParticipant(ctx, convID, userID); errors.Is(err, ErrNotFound) {
		members, err := s.memberIDs(ctx, convID)
		if err != nil {
			return wire.Conversation{}, err
		}
		if len(members) >= MaxGroupMembers {
			return wire.Conversation{}, wire.Errorf(wire.CodeInvalid, "a channel has at most %d members", MaxGroupMembers)
		}
		if _, err := s.recordMembership(ctx, membershipEvent(convID, userID, wire.KindJoined, nil, "")); err != nil {
			return wire.Conversation{}, err
		}
		s.announce(ctx, convID, []string{userID}, userID) // the joiner's other devices list it
	} else if err != nil {
		return wire.Conversation{}, s.internal("check membership", err)
	}
	return s.GetConversation(ctx, userID, convID)
}
