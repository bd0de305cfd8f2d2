// Package server is the chat domain: its types, the interfaces of the
// backing roles (durable tables, sequence counters, rate limits, connection
// registry, inbox index, profile cache, cross-node routing, blob storage), and
// the Service that implements accounts, conversations, the send path,
// boundaries, history, the inbox and the delivery worker on top of them.
//
// Frames in and out of a WebSocket are the protocol engine's
// (server/protocol); a connection's queue and how it closes are the
// connection runtime's (server/conn); the domain hands frames to users'
// connections through the runtime's Hub. docs/architecture.md draws the layers.
//
// Implementations live in sub-packages that know nothing of each other:
// server/sqlite and server/inmem (the embedded default, one node only),
// server/dynamo, server/redis and server/s3 (production, many nodes).
package server

import (
	"time"

	"github.com/chatterm/chat/wire"
)

// User is an account. PasswordHash is never sent to clients.
type User struct {
	ID           string
	DisplayName  string
	Status       string
	PasswordHash []byte
	Admin        bool
	HidePresence bool // others see neither online nor last seen (and neither does the user)
	Disabled     bool // by an admin: no login, no session
	// ResetHash is the hash of a one-time password-reset code an admin made,
	// good until ResetExpires; empty when there is none.
	ResetHash    string
	ResetExpires time.Time
	CreatedAt    time.Time
	// NameKeys, on CreateUser, are the confusable keys the account holds
	// (termtext.NameKey of its id and of its display name): no other
	// account may hold one. ListUsers may read them back (DynamoDB does);
	// GetUser does not.
	NameKeys []string
}

// ProfileChange is what UpdateProfile changes: the fields that are not nil.
type ProfileChange struct {
	DisplayName  *string
	Status       *string
	HidePresence *bool
	// What only an admin (or a password reset) changes.
	Admin        *bool
	Disabled     *bool
	PasswordHash []byte // nil: unchanged
	ResetHash    *string
	ResetExpires *time.Time
	// NameKeys, when not nil, replace the keys the account holds (with a
	// new display name): ErrConfusable, and nothing changed, when another
	// account holds one.
	NameKeys []string
}

// Empty says whether the change changes nothing (stores answer it with a read).
func (c ProfileChange) Empty() bool {
	return c.DisplayName == nil && c.Status == nil && c.HidePresence == nil && c.Admin == nil && c.Disabled == nil &&
		c.PasswordHash == nil && c.ResetHash == nil && c.ResetExpires == nil && c.NameKeys == nil
}

// Token is a login session, stored by the hash of the bearer token.
type Token struct {
	Hash      string
	UserID    string
	ExpiresAt time.Time
	// Disabled: the account was disabled while this token lived. The token
	// is kept, refused with account_disabled, so its client is told why.
	Disabled bool
}

// Invite is a single-use registration code, stored by its hash.
type Invite struct {
	Hash      string
	CreatedBy string
	ExpiresAt time.Time
}

// Claim says on what grounds a user is created: as the first account of an empty
// server (who becomes admin), with an invite, or neither (open registration).
// The store checks and consumes the claim in the same write as the user.
type Claim struct {
	First      bool
	InviteHash string
	Now        time.Time // invites expiring before Now are refused
}

// Conversation is a direct or group conversation with its last-message preview.
// LastSeq is the highest stored seq_no.
type Conversation struct {
	ID                string
	Type              string // wire.Direct, wire.Group or wire.Channel
	Name              string
	Topic             string // a group's or channel's, set by its admins
	LastSeq           int64
	LastMessageBody   string
	LastMessageSender string
	LastMessageAt     time.Time
	CreatedAt         time.Time
}

// Participant is a user's membership of a conversation.
type Participant struct {
	ConversationID string
	UserID         string
	Role           string
	JoinedAt       time.Time
}

// Message is a stored message. The key is (ConversationID, SeqNo).
// ReceiverID is set for direct conversations only. Content is empty and S3Ref set
// once the message has moved to the cold tier.
type Message struct {
	ConversationID string
	SeqNo          int64
	MessageID      string
	SenderID       string
	ReceiverID     string
	Content        string
	Attachment     string               // a media_id in the BlobStore
	AttachmentInfo *wire.AttachmentInfo // its file's name, type and size, as the sender said
	Timestamp      time.Time
	S3Ref          string

	// Events (wire.Message): Kind is wire.KindReaction, KindEdit or KindDelete
	// and TargetSeq the message it changes; a message has no Kind and may quote
	// one (ReplyTo).
	Kind      string
	TargetSeq int64
	ReplyTo   int64
	// What events left of a message (stores keep it on the message's row):
	// Content is the latest edit's; a deleted message has no content,
	// attachment or reactions; UpdatedSeq is the last event applied.
	Edited     bool
	Deleted    bool
	Reactions  map[string]string // user_id → emoji
	UpdatedSeq int64
	// BaseSeq, on an event being stored, is the target's UpdatedSeq the
	// Service checked it against: the store applies the event only if the
	// target is still at it (ErrTargetChanged otherwise), so two events racing
	// from two nodes cannot both be applied to what each thought it saw.
	BaseSeq int64
	// SenderAck, on a message being stored, is the sender's device's cumulative
	// ack carried by the send (wire.Frame.AckSeq): a store that is a
	// SenderAcker clears the sender's pending deliveries up to it in the same
	// write, so the ack costs neither a WebSocket message nor a write of its
	// own. Not stored.
	SenderAck int64
	// BaseRef, on an edit or delete being stored, is the target's S3Ref the
	// Service saw (and removes the blob of): the store refuses the event
	// (ErrTargetChanged) if the archiver moved the target meanwhile, so no
	// blob it wrote is left behind holding text the event took away.
	BaseRef string
	// Mentions are the members m mentions, resolved by the Service at send
	// (server/mentions.go): receivers' user ids, and wire.MentionAll or
	// wire.MentionHere. Stored with the message; see MessageStore.AppendMessage
	// for what they count.
	Mentions []string
}

// IsEvent says whether m changes another message rather than being one.
func (m Message) IsEvent() bool { return m.Kind != "" }

// Preview is the last-message line a conversation keeps for m (wire.Preview);
// for an edit or a delete, the line of the message it changed.
func (m Message) Preview() string {
	if m.Kind == wire.KindDelete || m.Deleted {
		return wire.DeletedPreview
	}
	if wire.IsMembershipKind(m.Kind) {
		return m.Wire().MembershipLine(nil)
	}
	return wire.Preview(m.Content, m.Attachment)
}

// Status is a user's tick boundaries in one conversation.
type Status struct {
	UserID           string
	ConversationID   string
	LastDeliveredSeq int64
	LastReadSeq      int64
}

// Pending is a row of pending_deliveries: the user has not acknowledged delivery of
// messages in the conversation from FirstUndeliveredSeq on.
type Pending struct {
	ReceiverID          string
	ConversationID      string
	FirstUndeliveredSeq int64
}

// InboxEntry is a conversation seen from one member: metadata, preview, and that
// member's own boundaries (from which the unread count is derived).
type InboxEntry struct {
	Conversation Conversation
	Status       Status
	// MentionSeqs are the seq_nos, ascending, of the messages mentioning the
	// member (by id, @all or @here) the store keeps for them: every one after
	// the member's read boundary at least. The unread-mentions count is
	// those after LastReadSeq.
	MentionSeqs []int64
}

// Wire is m as clients see it.
func (m Message) Wire() wire.Message { return wireMessage(m) }
