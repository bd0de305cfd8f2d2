package server

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// Presence says, for each other member of convID, whether they have a live
// connection on any node, and if not when one last went away. Only members
// may ask: presence is visible to the people one shares a conversation with,
// and not at all for a member who hides it (Profile.HidePresence).
// A registry that does not answer is an error (a stale "offline" would be a
// wrong answer, not a degraded one).
func (s *Service) Presence(ctx context.Context, userID, convID string) (wire.PresenceResponse, error) {
	others, err := s.othersIn(ctx, userID, convID)
	if err != nil {
		return wire.PresenceResponse{}, err
	}
	resp := wire.PresenceResponse{ConversationID: convID, Members: make([]wire.MemberPresence, 0, len(others))}
	// Who hides their presence sees no one's (as on WhatsApp): nothing to read.
	if me, err := s.profile(ctx, userID); err != nil {
		return wire.PresenceResponse{}, err
	} else if me.HidePresence {
		for _, u := range others {
			resp.Members = append(resp.Members, wire.MemberPresence{UserID: u, Hidden: true})
		}
		return resp, nil
	}
	nodes, err := s.cfg.Registry.Nodes(ctx, others)
	if err != nil {
		return wire.PresenceResponse{}, s.internal("read presence", err)
	}
	seen, err := s.cfg.Registry.LastSeen(ctx, others)
	if err != nil {
		return wire.PresenceResponse{}, s.internal("read last seen", err)
	}
	for _, u := range others {
		if p, err := s.profile(ctx, u); err != nil {
			return wire.PresenceResponse{}, err
		} else if p.HidePresence {
			resp.Members = append(resp.Members, wire.MemberPresence{UserID: u, Hidden: true})
			continue
		}
		// This node's own connections count even if their registry entry is
		// missing for a moment (an Add that failed, put back by the keeper).
		p := wire.MemberPresence{UserID: u, Online: len(nodes[u]) > 0 || s.hub.Online(u)}
		if !p.Online {
			p.LastSeen = seen[u].UTC()
		}
		resp.Members = append(resp.Members, p)
	}
	return resp, nil
}
