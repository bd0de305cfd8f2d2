package wire

//go:generate go run github.com/mailru/easyjson/easyjson@v0.9.2 -all -no_std_marshalers api.go

import "time"

// Conversation types.
const (
	Direct = "direct"
	Group  = "group"
)

// Participant roles.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Paging limits for history.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// Message is a stored message as clients see it. Timestamp is the server's clock
// when it stored the message: for display only, order is seq_no.
type Message struct {
	ConversationID string `json:"conversation_id"`
	SeqNo          int64  `json:"seq_no"`
	MessageID      string `json:"message_id"`
	SenderID       string `json:"sender_id"`
	Content        string `json:"content"`
	Attachment     string `json:"attachment,omitempty"` // a media_id (POST /v1/media)
	// AttachmentInfo is what the sender's client said of the attachment's
	// file, for display (AttachmentInfo.Validate).
	AttachmentInfo *AttachmentInfo `json:"attachment_info,omitempty"`
	Timestamp      time.Time       `json:"timestamp"`

	// An event (Kind not empty) changes the message at TargetSeq: a reaction,
	// an edit or a delete (docs/protocol.md, "Events"). It has a seq_no of its
	// own, so it is ordered, caught up and acked like any message, but it is
	// not shown as a message, counted as unread, or previewed.
	Kind      string `json:"kind,omitempty"`
	TargetSeq int64  `json:"target_seq,omitempty"`
	ReplyTo   int64  `json:"reply_to,omitempty"` // a message quoting the message at this seq_no
	// Members: the users a membership event (protocol 3, IsMembershipKind)
	// was made to.
	Members []string `json:"members,omitempty"`

	// The message as the events so far left it (history, catch-up): Content is
	// the latest edit's, a deleted message has no content or attachment left.
	// UpdatedSeq is the seq_no of the last event applied: a client applies an
	// event only if it is newer, so one seen again (a page fetched after it)
	// changes nothing.
	Edited     bool      `json:"edited,omitempty"`
	Deleted    bool      `json:"deleted,omitempty"`
	Reactions  Reactions `json:"reactions,omitempty"` // user_id → emoji
	UpdatedSeq int64     `json:"updated_seq,omitempty"`

	// Mentions are the members the message mentions (user ids, and MentionAll
	// or MentionHere), as the server resolved them from the content when it
	// stored the message (wire/mentions.go). An edit does not change them.
	Mentions []string `json:"mentions,omitempty"`
}

// Preview is the last-message line an inbox shows for a message with this
// content and attachment: the content, or a mark for an attachment sent
// without text. The server keeps it on the conversation and clients in their
// caches, so both take it from here and agree whichever a device saw first.
func Preview(content, attachment string) string {
	if content == "" && attachment != "" {
		return "[attachment]"
	}
	return content
}

// AttachmentInfo describes an attachment's file as the sender's client saw it:
// shown beside the attachment (sanitised like any text from another member),
// never trusted for the download, which is what it is.
type AttachmentInfo struct {
	Name string `json:"name,omitempty"` // the file's base name
	Type string `json:"type,omitempty"` // its media type
	Size int64  `json:"size,omitempty"` // bytes
}

// MemberStatus is one member's tick boundaries in a conversation.
type MemberStatus struct {
	UserID           string `json:"user_id"`
	LastDeliveredSeq int64  `json:"last_delivered_seq"`
	LastReadSeq      int64  `json:"last_read_seq"`
}

// Participant is a member of a conversation.
type Participant struct {
	UserID   string    `json:"user_id"`
	Role     string    `json:"role"`
	JoinedAt time.Time `json:"joined_at"`
}

// Conversation is a conversation's metadata with its last-message preview.
type Conversation struct {
	ConversationID    string        `json:"conversation_id"`
	Type              string        `json:"type"`
	Name              string        `json:"name,omitempty"`
	Topic             string        `json:"topic,omitempty"` // protocol 3; set by the admins
	LastSeq           int64         `json:"last_seq"`
	LastMessageBody   string        `json:"last_message_body,omitempty"`
	LastMessageSender string        `json:"last_message_sender,omitempty"`
	LastMessageAt     time.Time     `json:"last_message_at,omitzero"`
	CreatedAt         time.Time     `json:"created_at"`
	Participants      []Participant `json:"participants,omitempty"`
}

// RegisterRequest is POST /v1/register.
type RegisterRequest struct {
	UserID      string `json:"user_id"`
	Password    string `json:"password"`
	DisplayName string `json:"display_name,omitempty"`
	InviteCode  string `json:"invite_code,omitempty"`
}

// LoginRequest is POST /v1/login.
type LoginRequest struct {
	UserID   string `json:"user_id"`
	Password string `json:"password"`
}

// AuthResponse answers register and login.
type AuthResponse struct {
	UserID    string    `json:"user_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Admin     bool      `json:"admin,omitempty"`
}

// Profile is GET /v1/users/{id} and GET /v1/me.
type Profile struct {
	UserID      string `json:"user_id"`
	DisplayName string `json:"display_name"`
	Status      string `json:"status,omitempty"`
	Admin       bool   `json:"admin,omitempty"`
	// HidePresence: the user shows no presence (online, last seen) to others,
	// and sees none of theirs. Only in the user's own profile (GET /v1/me).
	HidePresence bool `json:"hide_presence,omitempty"`
}

// ProfileUpdate is PATCH /v1/me; nil fields stay as they are.
type ProfileUpdate struct {
	DisplayName  *string `json:"display_name,omitempty"`
	Status       *string `json:"status,omitempty"`
	HidePresence *bool   `json:"hide_presence,omitempty"`
}

// InviteResponse is POST /v1/invites (admins only).
type InviteResponse struct {
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expires_at"`
}

// CreateConversationRequest is POST /v1/conversations. Members exclude the caller.
type CreateConversationRequest struct {
	Type    string   `json:"type"` // Direct, Group or Channel
	Name    string   `json:"name,omitempty"`
	Topic   string   `json:"topic,omitempty"` // a group's or channel's
	Members []string `json:"members"`
}

// MembersRequest is POST /v1/conversations/{id}/members.
type MembersRequest struct {
	Members []string `json:"members"`
}

// SendRequest is POST /v1/conversations/{id}/messages.
type SendRequest struct {
	MessageID  string `json:"message_id"`
	Content    string `json:"content,omitempty"`
	Attachment string `json:"attachment,omitempty"` // a media_id the sender uploaded; content may then be empty
	// AttachmentInfo: the attachment's file name, type and size, for display.
	AttachmentInfo *AttachmentInfo `json:"attachment_info,omitempty"`
	Kind           string          `json:"kind,omitempty"`       // an event: KindReaction, KindEdit, KindDelete
	TargetSeq      int64           `json:"target_seq,omitempty"` // the message an event changes
	ReplyTo        int64           `json:"reply_to,omitempty"`   // the message a new message quotes
	// FirstTry says this message_id has not been sent before: no earlier try
	// went out, or every one was answered with a refusal that stored nothing
	// (not maybe_stored, not lost with its connection). The server then skips
	// its look-up of an earlier copy before taking a seq_no. A send wrongly
	// marked is still answered with the stored original; only a seq_no may go
	// unused.
	FirstTry bool `json:"first_try,omitempty"`
}

// MediaRequest is POST /v1/media: ask for a URL to upload one file to.
type MediaRequest struct {
	ContentType string `json:"content_type"`
	// Size is the file's length in bytes (1 or more): the upload URL takes
	// exactly that many, and they count against the uploader's quota and
	// byte rate from the moment of this request.
	Size int64 `json:"size"`
}

// MediaUsage answers GET /v1/media/usage (?user=<id> for a server admin):
// what a user's uploads take of the limits (docs/security.md). A limit of -1
// is off.
type MediaUsage struct {
	UserID  string `json:"user_id"`
	Bytes   int64  `json:"bytes"`   // of every recorded upload, sent or not yet
	Uploads int64  `json:"uploads"` // their number
	// QuotaBytes is the most Bytes may reach.
	QuotaBytes int64 `json:"quota_bytes"`
	// RateBytesPerSecond is the sustained upload rate, after a burst of
	// BurstBytes.
	RateBytesPerSecond int64 `json:"rate_bytes_per_second"`
	BurstBytes         int64 `json:"burst_bytes"`
	MaxFileBytes       int64 `json:"max_file_bytes"` // the largest one upload
	// UnsentTTLSeconds: an upload no message carries this long after it was
	// reserved is deleted, and its bytes no longer count.
	UnsentTTLSeconds int64 `json:"unsent_ttl_seconds"`
}

// MediaResponse answers it: PUT the bytes to upload_url (with the same
// Content-Type) before expires_at, then send a message with attachment=media_id.
// GET /v1/media/{media_id} redirects to a short-lived download URL.
type MediaResponse struct {
	MediaID   string    `json:"media_id"`
	UploadURL string    `json:"upload_url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// SendResponse answers a send (HTTP), and is the payload of a "sent" frame.
type SendResponse struct {
	ConversationID string    `json:"conversation_id"`
	SeqNo          int64     `json:"seq_no"`
	MessageID      string    `json:"message_id"`
	Timestamp      time.Time `json:"timestamp"`
	// Content, for a reaction, is the reaction as stored: "" when the same
	// emoji again took it away.
	Content string `json:"content,omitempty"`
	// Mentions are those the server resolved in the message, as stored
	// with it (Message.Mentions; absent when none, and for events).
	Mentions []string `json:"mentions,omitempty"`
}

// HistoryResponse is GET /v1/conversations/{id}/messages. Messages are newest first
// for before_seq paging and oldest first for after_seq catch-up. NextBeforeSeq is
// the cursor for the next older page, 0 when there is none.
type HistoryResponse struct {
	ConversationID string    `json:"conversation_id"`
	Messages       []Message `json:"messages"`
	NextBeforeSeq  int64     `json:"next_before_seq,omitempty"`
}

// SeqRequest is POST /v1/conversations/{id}/read and /delivered.
type SeqRequest struct {
	SeqNo int64 `json:"seq_no"`
}

// StatusResponse is GET /v1/conversations/{id}/status.
type StatusResponse struct {
	ConversationID string         `json:"conversation_id"`
	LastSeq        int64          `json:"last_seq"`
	Members        []MemberStatus `json:"members"`
}

// PresenceResponse is GET /v1/conversations/{id}/presence: whether each other
// member has a live connection now, and if not, when one last went away.
type PresenceResponse struct {
	ConversationID string           `json:"conversation_id"`
	Members        []MemberPresence `json:"members"`
}

// MemberPresence is one member's presence. LastSeen is zero when online, or
// when the server has no record (never connected, or longer ago than it keeps).
type MemberPresence struct {
	UserID   string    `json:"user_id"`
	Online   bool      `json:"online"`
	LastSeen time.Time `json:"last_seen,omitzero"`
	// Hidden: the member hides their presence, or the asker hides theirs (who
	// hides is not shown others' either); Online and LastSeen say nothing then.
	Hidden bool `json:"hidden,omitempty"`
}

// InboxEntry is one conversation in the inbox.
type InboxEntry struct {
	ConversationID    string    `json:"conversation_id"`
	Type              string    `json:"type"`
	Name              string    `json:"name,omitempty"`
	Peer              string    `json:"peer,omitempty"` // direct: the other member
	LastSeq           int64     `json:"last_seq"`
	LastMessageBody   string    `json:"last_message_body,omitempty"`
	LastMessageSender string    `json:"last_message_sender,omitempty"`
	LastMessageAt     time.Time `json:"last_message_at,omitzero"`
	LastDeliveredSeq  int64     `json:"last_delivered_seq"`
	LastReadSeq       int64     `json:"last_read_seq"`
	Unread            int64     `json:"unread"`
	// Mentions counts the unread messages (after last_read_seq) that mention
	// the user, up to MaxUnread.
	Mentions int64 `json:"mentions,omitempty"`
}

// InboxResponse is GET /v1/inbox: most recent activity first.
type InboxResponse struct {
	Conversations []InboxEntry `json:"conversations"`
	// Stale marks an offline copy: the server's store could not be read, and
	// these are the entries of the user's last inbox answers the server kept
	// (docs/reliability.md, "A DynamoDB outage"). Previews, boundaries and
	// counts are as they were then, and conversations joined since are
	// missing: a client shows it as such and forgets nothing it does not list.
	Stale bool `json:"stale,omitempty"`
}

// AdminUser is a user as a server admin sees it (GET /v1/admin/users).
type AdminUser struct {
	UserID      string    `json:"user_id"`
	DisplayName string    `json:"display_name"`
	Admin       bool      `json:"admin"`
	Disabled    bool      `json:"disabled"`
	Online      bool      `json:"online"`
	CreatedAt   time.Time `json:"created_at"`
}

// AdminUsersResponse is GET /v1/admin/users, by user id.
type AdminUsersResponse struct {
	Users []AdminUser `json:"users"`
}

// AdminUserChange is PATCH /v1/admin/users/{user_id}: the fields given change.
type AdminUserChange struct {
	Disabled *bool `json:"disabled,omitempty"` // true also ends every session at once
	Admin    *bool `json:"admin,omitempty"`
}

// PasswordResetCode is POST /v1/admin/users/{user_id}/password-reset: a
// one-time code to hand to the user, who sets a new password with it
// (POST /v1/password-reset) before ExpiresAt.
type PasswordResetCode struct {
	UserID    string    `json:"user_id"`
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PasswordResetRequest is POST /v1/password-reset: answered like a login.
type PasswordResetRequest struct {
	UserID   string `json:"user_id"`
	Code     string `json:"code"`
	Password string `json:"password"`
}

// InviteInfo is an unused, unexpired invite (the code itself is not kept:
// ID is its hash).
type InviteInfo struct {
	ID        string    `json:"id"`
	CreatedBy string    `json:"created_by"`
	ExpiresAt time.Time `json:"expires_at"`
}

// InvitesResponse is GET /v1/admin/invites, newest first.
type InvitesResponse struct {
	Invites []InviteInfo `json:"invites"`
}
