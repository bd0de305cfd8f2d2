package wire

//go:generate go run github.com/mailru/easyjson/easyjson@v0.9.2 -all -no_std_marshalers channels.go

import (
	"strings"
	"time"
)

// Channel is the conversation type of a public channel: a group that any
// account on the server can list (GET /v1/channels), join and leave by
// itself. Its history is open to whoever joins. Its id has the group prefix,
// and everything a group has, a channel has too.
const Channel = "channel"

// Membership events (Message.Kind, protocol 3): a change of who is in a
// group, what it is called or who administers it, stored in the
// conversation's log in the same write as the change, so every member sees it
// at the same place among the messages. SenderID is who made the change;
// Members the users it was made to (added, removed, admin_granted,
// admin_revoked); Content the new name (renamed) or topic (topic, "" for
// none). Like any event they are neither unread nor the inbox preview (except
// in a conversation with nothing else in it), and nobody sends one: the
// server records them for the requests that change a group.
const (
	KindAdded        = "added"
	KindRemoved      = "removed"
	KindLeft         = "left"
	KindJoined       = "joined"
	KindRenamed      = "renamed"
	KindTopic        = "topic"
	KindAdminGranted = "admin_granted"
	KindAdminRevoked = "admin_revoked"
)

// MaxTopicLen bounds a conversation's topic, in characters.
const MaxTopicLen = 250

// IsMembershipKind says whether kind is one of the membership events.
func IsMembershipKind(kind string) bool {
	switch kind {
	case KindAdded, KindRemoved, KindLeft, KindJoined, KindRenamed, KindTopic, KindAdminGranted, KindAdminRevoked:
		return true
	}
	return false
}

// MembershipLine is how a membership event reads in a conversation ("alice
// added carol and dave"), with name giving how each user is shown (nil: the
// user id). Text a member chose (a name, a topic) is quoted as it is: the
// caller sanitises the line like any text from another member. "" for a
// message that is not a membership event.
func (m Message) MembershipLine(name func(string) string) string {
	if name == nil {
		name = func(id string) string { return id }
	}
	who := name(m.SenderID)
	subjects := make([]string, len(m.Members))
	for i, u := range m.Members {
		subjects[i] = name(u)
	}
	list := joinNames(subjects)
	switch m.Kind {
	case KindAdded:
		return who + " added " + list
	case KindRemoved:
		return who + " removed " + list
	case KindLeft:
		return who + " left"
	case KindJoined:
		return who + " joined"
	case KindRenamed:
		return who + " renamed the group to “" + m.Content + "”"
	case KindTopic:
		if m.Content == "" {
			return who + " cleared the topic"
		}
		return who + " set the topic to “" + m.Content + "”"
	case KindAdminGranted:
		return who + " made " + list + " admin"
	case KindAdminRevoked:
		return who + " took admin from " + list
	}
	return ""
}

// joinNames is "a", "a and b", "a, b and c".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "nobody"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ChannelInfo is one channel as GET /v1/channels lists it.
type ChannelInfo struct {
	ConversationID string    `json:"conversation_id"`
	Name           string    `json:"name"`
	Topic          string    `json:"topic,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	// Joined: the asker is a member.
	Joined bool `json:"joined,omitempty"`
}

// ChannelsResponse is GET /v1/channels?after=<conversation_id>&limit=<n>: the
// server's channels by id, a page at a time. Next is the after of the next
// page, "" after the last.
type ChannelsResponse struct {
	Channels []ChannelInfo `json:"channels"`
	Next     string        `json:"next,omitempty"`
}

// ConversationChange is PATCH /v1/conversations/{id}: a group's or channel's
// admins rename it or set its topic; absent fields stay as they are.
type ConversationChange struct {
	Name  *string `json:"name,omitempty"`
	Topic *string `json:"topic,omitempty"`
}

// RoleRequest is PUT /v1/conversations/{id}/members/{user_id}/role: an admin
// makes a member admin (RoleAdmin) or takes it back (RoleMember).
type RoleRequest struct {
	Role string `json:"role"`
}

// ValidateTopic checks a topic: printable text of at most MaxTopicLen
// characters; "" clears it.
func ValidateTopic(topic string) error {
	if topic == "" {
		return nil
	}
	return ValidateName("topic", topic, MaxTopicLen)
}

// IsGroupType says whether a conversation of type t is a group of members
// (a group or a channel) rather than a direct conversation.
func IsGroupType(t string) bool { return t == Group || t == Channel }
