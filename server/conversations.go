package server

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/chatterm/chat/wire"
)

// MaxGroupMembers bounds a group (and so the fan-out of one send).
const MaxGroupMembers = 1000

// CreateConversation creates a group, or finds-or-creates the direct conversation
// with one other user, or with the caller themselves: their note to self.
// created is false for an existing direct conversation.
func (s *Service) CreateConversation(ctx context.Context, userID string, req wire.CreateConversationRequest) (conv wire.Conversation, created bool, err error) {
	switch req.Type {
	case wire.Direct:
		if len(req.Members) != 1 {
			return conv, false, wire.Errorf(wire.CodeInvalid, "a direct conversation has exactly one other member")
		}
		if req.Name != "" || req.Topic != "" {
			return conv, false, wire.Errorf(wire.CodeInvalid, "a direct conversation has no name or topic")
		}
		id, created, err := s.ensureDirect(ctx, userID, req.Members[0])
		if err != nil {
			return conv, false, err
		}
		conv, err = s.GetConversation(ctx, userID, id)
		return conv, created, err
	case wire.Group, wire.Channel:
		return s.createGroup(ctx, userID, req)
	default:
		return conv, false, wire.Errorf(wire.CodeInvalid, "type must be %q, %q or %q", wire.Direct, wire.Group, wire.Channel)
	}
}

// ensureDirect creates the direct conversation between user and peer if missing.
func (s *Service) ensureDirect(ctx context.Context, userID, peer string) (string, bool, error) {
	if err := wire.ValidateUserID(peer); err != nil {
		return "", false, err
	}
	id := wire.DirectConversationID(userID, peer)
	if _, err := s.store.GetConversation(ctx, id); err == nil {
		return id, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", false, s.internal("get conversation", err)
	}
	// Counted only when it is new: `chat send --to bob` finds the same one
	// again on every call.
	if err := s.allow(ctx, "conversation", userID, s.cfg.Limits.Conversations); err != nil {
		return "", false, err
	}
	if _, err := s.store.GetUser(ctx, peer); errors.Is(err, ErrNotFound) {
		return "", false, wire.Errorf(wire.CodeNotFound, "no user %q", peer)
	} else if err != nil {
		return "", false, s.internal("get user", err)
	}
	now := s.cfg.Now()
	c := Conversation{ID: id, Type: wire.Direct, CreatedAt: now}
	members := []Participant{{ConversationID: id, UserID: userID, Role: wire.RoleMember, JoinedAt: now}}
	// A note to self has one member: one participant row, and so one status
	// and no receiver (nothing pending, nobody's tick to wait for).
	if peer != userID {
		members = append(members, Participant{ConversationID: id, UserID: peer, Role: wire.RoleMember, JoinedAt: now})
	}
	err := s.store.CreateConversation(ctx, c, members)
	if errors.Is(err, ErrExists) {
		return id, false, nil // created concurrently by the other side
	}
	if err != nil {
		return "", false, s.internal("create conversation", err)
	}
	s.announce(ctx, id, []string{peer}, userID)
	return id, true, nil
}

func (s *Service) createGroup(ctx context.Context, userID string, req wire.CreateConversationRequest) (wire.Conversation, bool, error) {
	if req.Name == "" {
		return wire.Conversation{}, false, wire.Errorf(wire.CodeInvalid, "a group needs a name")
	}
	if err := s.allowUser(ctx, "group", userID, groupsPerSecond); err != nil {
		return wire.Conversation{}, false, err
	}
	if err := wire.ValidateName("name", req.Name, wire.MaxGroupNameLen); err != nil {
		return wire.Conversation{}, false, err
	}
	if err := wire.ValidateTopic(req.Topic); err != nil {
		return wire.Conversation{}, false, err
	}
	if req.Type == wire.Channel {
		// A channel is listed to every account: the per-user conversation
		// limit keeps one account from filling the directory.
		if err := s.allow(ctx, "conversation", userID, s.cfg.Limits.Conversations); err != nil {
			return wire.Conversation{}, false, err
		}
	}
	others, err := s.checkNewMembers(ctx, userID, req.Members, nil)
	if err != nil {
		return wire.Conversation{}, false, err
	}
	if len(others)+1 > MaxGroupMembers {
		return wire.Conversation{}, false, wire.Errorf(wire.CodeInvalid, "a group has at most %d members", MaxGroupMembers)
	}
	now := s.cfg.Now()
	c := Conversation{ID: wire.NewGroupID(), Type: req.Type, Name: req.Name, Topic: req.Topic, CreatedAt: now}
	members := []Participant{{ConversationID: c.ID, UserID: userID, Role: wire.RoleAdmin, JoinedAt: now}}
	for _, u := range others {
		members = append(members, Participant{ConversationID: c.ID, UserID: u, Role: wire.RoleMember, JoinedAt: now})
	}
	if err := s.store.CreateConversation(ctx, c, members); err != nil {
		return wire.Conversation{}, false, s.internal("create group", err)
	}
	s.announce(ctx, c.ID, others, userID)
	conv, err := s.GetConversation(ctx, userID, c.ID)
	return conv, true, err
}

// checkNewMembers validates and dedupes a member list, drops the caller and users
// in existing, and checks that every user exists.
func (s *Service) checkNewMembers(ctx context.Context, userID string, members, existing []string) ([]string, error) {
	var out []string
	for _, m := range members {
		if err := wire.ValidateUserID(m); err != nil {
			return nil, err
		}
		if m == userID || slices.Contains(out, m) || slices.Contains(existing, m) {
			continue
		}
		if len(out) >= MaxGroupMembers {
			return nil, wire.Errorf(wire.CodeInvalid, "a group has at most %d members", MaxGroupMembers)
		}
		if _, err := s.store.GetUser(ctx, m); errors.Is(err, ErrNotFound) {
			return nil, wire.Errorf(wire.CodeNotFound, "no user %q", m)
		} else if err != nil {
			return nil, s.internal("get user", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// GetConversation returns a conversation with its participants; members only.
func (s *Service) GetConversation(ctx context.Context, userID, convID string) (wire.Conversation, error) {
	if _, err := s.requireMember(ctx, userID, convID); err != nil {
		return wire.Conversation{}, err
	}
	c, err := s.store.GetConversation(ctx, convID)
	if err != nil {
		return wire.Conversation{}, s.notFoundOr(err, "conversation", convID)
	}
	ps, err := s.store.ListParticipants(ctx, convID)
	if err != nil {
		return wire.Conversation{}, s.internal("list participants", err)
	}
	return wireConversation(c, ps), nil
}

func wireConversation(c Conversation, ps []Participant) wire.Conversation {
	out := wire.Conversation{ConversationID: c.ID, Type: c.Type, Name: c.Name, Topic: c.Topic, LastSeq: c.LastSeq,
		LastMessageBody: c.LastMessageBody, LastMessageSender: c.LastMessageSender, LastMessageAt: c.LastMessageAt, CreatedAt: c.CreatedAt}
	heir := successor(ps)
	for _, p := range ps {
		role := p.Role
		if p.UserID == heir {
			role = wire.RoleAdmin
		}
		out.Participants = append(out.Participants, wire.Participant{UserID: p.UserID, Role: role, JoinedAt: p.JoinedAt})
	}
	return out
}

// successor is the member who is a group's admin because no one else is: when
// the last admin leaves (or is removed), the longest-standing member (earliest
// joined_at, then the smallest user id) is admin from that moment on. Derived
// from the participants as they stand, it needs no second write beside the
// leave, so a group is never left without an admin. "" when the group has an
// admin (or no members).
func successor(ps []Participant) string {
	heir := -1
	for i, p := range ps {
		if p.Role == wire.RoleAdmin {
			return ""
		}
		if heir < 0 || p.JoinedAt.Before(ps[heir].JoinedAt) || p.JoinedAt.Equal(ps[heir].JoinedAt) && p.UserID < ps[heir].UserID {
			heir = i
		}
	}
	if heir < 0 {
		return ""
	}
	return ps[heir].UserID
}

// isAdmin reports whether p may administer its group: an admin, or the
// successor of a group whose admins have all left.
func (s *Service) isAdmin(ctx context.Context, convID string, p Participant) (bool, error) {
	if p.Role == wire.RoleAdmin {
		return true, nil
	}
	ps, err := s.store.ListParticipants(ctx, convID)
	if err != nil {
		return false, s.internal("list participants", err)
	}
	return successor(ps) == p.UserID, nil
}

// AddMembers adds users to a group; group admins only.
func (s *Service) AddMembers(ctx context.Context, userID, convID string, members []string) (wire.Conversation, error) {
	if err := s.allow(ctx, "member", userID, s.cfg.Limits.MemberAdds); err != nil {
		return wire.Conversation{}, err
	}
	c, current, err := s.requireAdmin(ctx, userID, convID, "add members")
	if err != nil {
		return wire.Conversation{}, err
	}
	others, err := s.checkNewMembers(ctx, userID, members, current)
	if err != nil {
		return wire.Conversation{}, err
	}
	if len(current)+len(others) > MaxGroupMembers {
		return wire.Conversation{}, wire.Errorf(wire.CodeInvalid, "a group has at most %d members", MaxGroupMembers)
	}
	if len(others) > 0 {
		// The members come in with the event that says so (membership_events.go).
		added, err := s.recordInChunks(ctx, c.ID, userID, wire.KindAdded, others)
		var in []string
		for _, ev := range added {
			in = append(in, ev.Subjects()...)
		}
		if len(in) > 0 {
			s.announce(ctx, c.ID, in, userID)
		}
		if err != nil {
			return wire.Conversation{}, err
		}
	}
	return s.GetConversation(ctx, userID, c.ID)
}

// RemoveMember removes a user from a group: an admin removes anyone, a member
// removes only themself (leaves).
func (s *Service) RemoveMember(ctx context.Context, userID, convID, member string) error {
	p, err := s.requireMember(ctx, userID, convID)
	if err != nil {
		return err
	}
	if !isGroup(convID) {
		return wire.Errorf(wire.CodeInvalid, "members of a direct conversation cannot change")
	}
	if member != userID {
		admin, err := s.isAdmin(ctx, convID, p)
		if err != nil {
			return err
		}
		if !admin {
			return wire.Errorf(wire.CodeForbidden, "only group admins remove other members")
		}
	}
	ev := membershipEvent(convID, userID, wire.KindLeft, nil, "")
	if member != userID {
		if err := wire.ValidateUserID(member); err != nil {
			return err
		}
		if _, err := s.store.GetParticipant(ctx, convID, member); errors.Is(err, ErrNotFound) {
			return wire.Errorf(wire.CodeNotFound, "%q is not a member of %s", member, convID)
		} else if err != nil {
			return s.internal("read participant", err)
		}
		ev = membershipEvent(convID, userID, wire.KindRemoved, []string{member}, "")
	}
	// The membership goes with the event that says so (membership_events.go).
	if _, err := s.recordMembership(ctx, ev); err != nil {
		return err
	}
	if err := s.cfg.Inbox.Forget(ctx, member, convID); err != nil {
		s.log.Debug("inbox forget", "err", err)
	}
	s.dropFromInboxCopy(ctx, member, convID)
	return nil
}

func isGroup(convID string) bool {
	return len(convID) > len(wire.GroupPrefix) && convID[:len(wire.GroupPrefix)] == wire.GroupPrefix
}

// requireMember checks that userID is a participant; outsiders get not_found for
// conversations they cannot see.
func (s *Service) requireMember(ctx context.Context, userID, convID string) (Participant, error) {
	if err := wire.ValidateConversationID(convID); err != nil {
		return Participant{}, err
	}
	p, err := s.store.GetParticipant(ctx, convID, userID)
	if errors.Is(err, ErrNotFound) {
		return p, wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", convID)
	}
	if err != nil {
		return p, s.internal("check membership", err)
	}
	return p, nil
}

// othersIn returns the members of convID but userID, once it has checked that
// userID is one, from the member cache (no store read when it is warm).
func (s *Service) othersIn(ctx context.Context, userID, convID string) ([]string, error) {
	if err := wire.ValidateConversationID(convID); err != nil {
		return nil, err
	}
	members, err := s.memberIDs(ctx, convID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(members, userID) {
		return nil, wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", convID)
	}
	return without(members, userID), nil
}

// without is members less user, in a new slice.
func without(members []string, user string) []string {
	out := make([]string, 0, max(len(members)-1, 0))
	for _, m := range members {
		if m != user {
			out = append(out, m)
		}
	}
	return out
}

// requireAdmin checks that userID administers the group convID before they
// do what (for the error).
func (s *Service) requireAdmin(ctx context.Context, userID, convID, what string) (Conversation, []string, error) {
	p, err := s.requireMember(ctx, userID, convID)
	if err != nil {
		return Conversation{}, nil, err
	}
	if !isGroup(convID) {
		return Conversation{}, nil, wire.Errorf(wire.CodeInvalid, "members of a direct conversation cannot change")
	}
	if admin, err := s.isAdmin(ctx, convID, p); err != nil {
		return Conversation{}, nil, err
	} else if !admin {
		return Conversation{}, nil, wire.Errorf(wire.CodeForbidden, "only group admins %s", what)
	}
	c, err := s.store.GetConversation(ctx, convID)
	if err != nil {
		return Conversation{}, nil, s.notFoundOr(err, "conversation", convID)
	}
	current, err := s.memberIDs(ctx, convID)
	return c, current, err
}

// memberIDs returns a conversation's member ids, cached for a few seconds. A
// direct conversation's members come from its id.
func (s *Service) memberIDs(ctx context.Context, convID string) ([]string, error) {
	if a, b, ok := wire.DirectMembers(convID); ok {
		if a == b { // a note to self: listed twice its messages would be fanned out twice
			return []string{a}, nil
		}
		return []string{a, b}, nil
	}
	now := time.Now()
	if users, ok := s.members.get(convID, now); ok {
		return users, nil
	}
	mark := s.members.mark()
	ps, err := s.store.ListParticipants(ctx, convID)
	if err != nil {
		if users, ok := s.staleMembers(convID, err); ok {
			return users, nil
		}
		return nil, s.internal("list participants", err)
	}
	users := make([]string, len(ps))
	for i, p := range ps {
		users[i] = p.UserID
	}
	s.members.put(mark, convID, users, now)
	return users, nil
}

func (s *Service) notFoundOr(err error, what, id string) error {
	if errors.Is(err, ErrNotFound) {
		return wire.Errorf(wire.CodeNotFound, "no %s %s", what, id)
	}
	return s.internal("get "+what, err)
}

// announce pushes a conversation frame to users who were just added to it, so
// their clients list it without polling.
func (s *Service) announce(ctx context.Context, convID string, users []string, actor string) {
	c, err := s.store.GetConversation(ctx, convID)
	if err != nil {
		return
	}
	ps, _ := s.store.ListParticipants(ctx, convID)
	if err := s.cfg.Inbox.Touch(ctx, append([]string{actor}, users...), convID, s.cfg.Now()); err != nil {
		s.log.Debug("inbox touch", "err", err)
	}
	s.rejoinInboxCopies(ctx, convID, users)
	s.push(ctx, users, wire.Frame{Type: wire.TypeConversation, Conv: ptr(wireConversation(c, ps))}, nil)
}

func ptr[T any](v T) *T { return &v }
