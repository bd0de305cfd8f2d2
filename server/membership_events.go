package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/chatterm/chat/wire"
)

// Membership events (wire.IsMembershipKind) record who joined, left, was
// added or removed, renamed a group, set its topic or changed who
// administers it. Each is a row of the conversation's log with a seq_no of
// its own, written by the store in the same write as the change it records
// (Store.AppendMessage), so every member's client sees it at the same place
// among the messages, and a change is never stored without its line nor a
// line without its change.
//
// What an event does, as a store applies it (Subjects are the users it was
// made to, SenderID who made it; it is stored at m.Timestamp):
//   - added: the subjects become members (role member, joined at
//     m.Timestamp); joined: the sender does. ErrTargetChanged if one is a
//     member already.
//   - removed: the subjects stop being members and their pending rows go;
//     left: the sender's do. ErrTargetChanged if one is not a member.
//   - renamed: the conversation's name becomes m.Content; topic: its topic
//     does ("" clears it), and so do a channel's in the channel directory.
//   - admin_granted, admin_revoked: the subjects' role becomes admin or
//     member. ErrTargetChanged if one is not a member.
//
// Like any event it moves last_seq and gives the receivers pending rows;
// unlike a message it moves neither the sender's boundaries (the sender may
// have just left) nor the preview, unless the conversation has no message
// yet: then its line (Message.Preview) is the preview, so a new group's inbox
// row says something.

// maxEventSubjects bounds the users one event is made to: a DynamoDB
// transaction holds the event's rows, one per subject and the receivers'
// pending rows within 100 items. Adding more users records one event per
// maxEventSubjects of them.
const maxEventSubjects = 25

// hasSubjects says whether an event of kind is made to users it names.
func hasSubjects(kind string) bool {
	switch kind {
	case wire.KindAdded, wire.KindRemoved, wire.KindAdminGranted, wire.KindAdminRevoked:
		return true
	}
	return false
}

// Subjects are the users a membership event was made to. Stores keep them
// in the row's content, separated by spaces (user ids have none), so the
// event needs no column or attribute that no other row has.
func (m Message) Subjects() []string {
	if !hasSubjects(m.Kind) {
		return nil
	}
	return strings.Fields(m.Content)
}

// JoiningSubjects are the users event m makes members; LeavingSubjects those
// it makes stop being members.
func (m Message) JoiningSubjects() []string {
	switch m.Kind {
	case wire.KindAdded:
		return m.Subjects()
	case wire.KindJoined:
		return []string{m.SenderID}
	}
	return nil
}

func (m Message) LeavingSubjects() []string {
	switch m.Kind {
	case wire.KindRemoved:
		return m.Subjects()
	case wire.KindLeft:
		return []string{m.SenderID}
	}
	return nil
}

func wireMembershipEvent(m Message) wire.Message {
	return wire.Message{ConversationID: m.ConversationID, SeqNo: m.SeqNo, MessageID: m.MessageID, SenderID: m.SenderID,
		Timestamp: m.Timestamp, Kind: m.Kind, Members: m.Subjects()}
}

// membershipEvent builds the event actor's change makes in convID; subjects
// are kept as the stores keep them (Message.Subjects).
func membershipEvent(convID, actor, kind string, subjects []string, content string) Message {
	if hasSubjects(kind) {
		content = strings.Join(subjects, " ")
	}
	return Message{ConversationID: convID, MessageID: wire.NewMessageID(), SenderID: actor, Kind: kind, Content: content}
}

// recordMembership stores ev, with the change it records, under the
// conversation's lock (so it takes its seq_no in order with the sends), and
// hands it to the members before and after the change: a removed member
// sees the line that removed them.
func (s *Service) recordMembership(ctx context.Context, ev Message) (Message, error) {
	if !s.begin() {
		return ev, &wire.Error{Code: wire.CodeUnavailable, Message: "server is shutting down; retry on reconnect", RetryAfterMs: 1000}
	}
	defer s.wg.Done()
	st := s.locks.lock(ev.ConversationID)
	defer st.Unlock()
	s.members.forget(ev.ConversationID)
	before, err := s.memberIDs(ctx, ev.ConversationID)
	if err != nil {
		return ev, err
	}
	after := slices.DeleteFunc(slices.Clone(before), func(u string) bool { return slices.Contains(ev.LeavingSubjects(), u) })
	for _, u := range ev.JoiningSubjects() {
		if !slices.Contains(after, u) {
			after = append(after, u)
		}
	}
	ev.Timestamp = s.cfg.Now().UTC().Truncate(time.Microsecond)
	stored, _, err := s.storeOne(ctx, ev, without(after, ev.SenderID), &seqPool{next: 1})
	s.members.forget(ev.ConversationID)
	switch {
	case errors.Is(err, ErrTargetChanged):
		return ev, wire.Errorf(wire.CodeConflict, "the members of %s changed meanwhile; look again and retry", ev.ConversationID)
	case errors.Is(err, ErrNotFound):
		return ev, wire.Errorf(wire.CodeNotFound, "no conversation %s", ev.ConversationID)
	case err != nil:
		return ev, s.internal("record "+ev.Kind, err)
	}
	s.metrics.MessagesStored.Inc()
	if len(ev.LeavingSubjects()) > 0 || len(ev.JoiningSubjects()) > 0 {
		s.revokeMembers(ctx, ev.ConversationID)
	}
	st.waitTurn()
	audience := slices.Clone(after)
	for _, u := range before {
		if !slices.Contains(audience, u) {
			audience = append(audience, u)
		}
	}
	s.fanout(ctx, []Message{stored}, audience, nil)
	return stored, nil
}

// recordInChunks records one event per maxEventSubjects of subjects.
func (s *Service) recordInChunks(ctx context.Context, convID, actor, kind string, subjects []string) ([]Message, error) {
	var out []Message
	for chunk := range slices.Chunk(subjects, maxEventSubjects) {
		ev, err := s.recordMembership(ctx, membershipEvent(convID, actor, kind, chunk, ""))
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// ChangeConversation renames a group or channel or sets its topic: admins
// only, each change one event.
func (s *Service) ChangeConversation(ctx context.Context, userID, convID string, change wire.ConversationChange) (wire.Conversation, error) {
	if change.Name == nil && change.Topic == nil {
		return wire.Conversation{}, wire.Errorf(wire.CodeInvalid, "give a name or a topic to change")
	}
	if change.Name != nil {
		if *change.Name == "" {
			return wire.Conversation{}, wire.Errorf(wire.CodeInvalid, "a group needs a name")
		}
		if err := wire.ValidateName("name", *change.Name, wire.MaxGroupNameLen); err != nil {
			return wire.Conversation{}, err
		}
	}
	if change.Topic != nil {
		if err := wire.ValidateTopic(*change.Topic); err != nil {
			return wire.Conversation{}, err
		}
	}
	if err := s.allow(ctx, "member", userID, s.cfg.Limits.MemberAdds); err != nil {
		return wire.Conversation{}, err
	}
	c, _, err := s.requireAdmin(ctx, userID, convID, "change its name or topic")
	if err != nil {
		return wire.Conversation{}, err
	}
	if change.Name != nil && *change.Name != c.Name {
		if _, err := s.recordMembership(ctx, membershipEvent(convID, userID, wire.KindRenamed, nil, *change.Name)); err != nil {
			return wire.Conversation{}, err
		}
	}
	if change.Topic != nil && *change.Topic != c.Topic {
		if _, err := s.recordMembership(ctx, membershipEvent(convID, userID, wire.KindTopic, nil, *change.Topic)); err != nil {
			return wire.Conversation{}, err
		}
	}
	return s.GetConversation(ctx, userID, convID)
}

// SetRole makes member an admin of the group or takes it back: admins only.
func (s *Service) SetRole(ctx context.Context, userID, convID, member, role string) (wire.Conversation, error) {
	kind := wire.KindAdminGranted
	switch role {
	case wire.RoleAdmin:
	case wire.RoleMember:
		kind = wire.KindAdminRevoked
	default:
		return wire.Conversation{}, wire.Errorf(wire.CodeInvalid, "role must be %q or %q", wire.RoleAdmin, wire.RoleMember)
	}
	if err := wire.ValidateUserID(member); err != nil {
		return wire.Conversation{}, err
	}
	if err := s.allow(ctx, "member", userID, s.cfg.Limits.MemberAdds); err != nil {
		return wire.Conversation{}, err
	}
	if _, _, err := s.requireAdmin(ctx, userID, convID, "change roles"); err != nil {
		return wire.Conversation{}, err
	}
	p, err := s.store.GetParticipant(ctx, convID, member)
	if errors.Is(err, ErrNotFound) {
		return wire.Conversation{}, wire.Errorf(wire.CodeNotFound, "%q is not a member of %s", member, convID)
	} else if err != nil {
		return wire.Conversation{}, s.internal("read participant", err)
	}
	if p.Role != role {
		if _, err := s.recordMembership(ctx, membershipEvent(convID, userID, kind, []string{member}, "")); err != nil {
			return wire.Conversation{}, err
		}
	}
	return s.GetConversation(ctx, userID, convID)
}
