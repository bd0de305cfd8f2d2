package tui

import (
	"context"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Backend is everything the TUI needs from the chat client. The TUI never calls it
// from Update: every call runs inside a tea.Cmd, so a slow disk or network shows
// as a "loading" line instead of a frozen screen. Implementations must be safe for
// concurrent use, since several commands may run at once.
type Backend interface {
	// Session returns the logged-in user and the server address; an empty user
	// means nobody is logged in and the TUI starts on the first-run screen.
	Session() (user, server string)
	// Login and Register authenticate against server, store the session and bring
	// the connection up; afterwards Session reports the user.
	Login(ctx context.Context, server, user, password string) error
	Register(ctx context.Context, server, user, password, invite string) error

	// Inbox returns the conversations, most recent activity first, from the local
	// cache so that the first screen paints without waiting for the network.
	Inbox(ctx context.Context) ([]wire.InboxEntry, error)
	// History returns messages with seq_no < beforeSeq (0: the newest), oldest
	// first: from the cache, then from the server when the cache runs out.
	History(ctx context.Context, conversationID string, beforeSeq int64, limit int) (Page, error)
	// Statuses returns every member's delivered/read boundaries, as cached.
	Statuses(ctx context.Context, conversationID string) ([]wire.MemberStatus, error)
	// Conversation returns the conversation with its participants.
	Conversation(ctx context.Context, conversationID string) (wire.Conversation, error)

	// Send queues a message (ConversationID, Content; ReplyTo for a reply) or
	// an event (Kind, TargetSeq) and returns at once with its message_id and a
	// local timestamp (seq_no 0: pending). A SentEvent follows when the server
	// stored it.
	Send(ctx context.Context, m wire.Message) (wire.Message, error)
	// Attach uploads the file at path and queues a message carrying it, with
	// text (may be empty); like Send once the upload is done.
	Attach(ctx context.Context, conversationID, path, text string) (wire.Message, error)
	// MediaURL returns a short-lived URL of an attachment (to open it).
	MediaURL(ctx context.Context, mediaID string) (string, error)
	// SaveMedia downloads an attachment into the user's download directory
	// under name, never over an existing file, and returns the path.
	SaveMedia(ctx context.Context, mediaID, name string) (string, error)
	// Search finds cached messages with every word of query (as a word or
	// its start), in one conversation or all (""), newest first, a page of
	// at most limit after the hit after (nil: from the newest); more says
	// whether another page follows.
	Search(ctx context.Context, query, conversationID string, after *wire.Message, limit int) (hits []SearchHit, more bool, err error)
	// IndexForSearch makes at most n of the cached messages not yet
	// searchable searchable and reports how many are left: a large backlog
	// is indexed a step at a time while the search box says so.
	IndexForSearch(ctx context.Context, n int) (left int, err error)
	// MarkRead reports that the user has seen the conversation up to seq.
	MarkRead(ctx context.Context, conversationID string, seq int64) error
	// CreateDirect opens (or finds) the direct conversation with peer.
	CreateDirect(ctx context.Context, peer string) (wire.Conversation, error)
	// CreateGroup creates a group with the caller and members.
	CreateGroup(ctx context.Context, name string, members []string) (wire.Conversation, error)
	// AddMembers adds users to a group (group admins only) and returns it.
	AddMembers(ctx context.Context, conversationID string, members []string) (wire.Conversation, error)
	// Channels lists the server's public channels; JoinChannel joins one
	// and returns it; Leave leaves one.
	Channels(ctx context.Context) ([]wire.ChannelInfo, error)
	JoinChannel(ctx context.Context, conversationID string) (wire.Conversation, error)
	Leave(ctx context.Context, conversationID string) error

	// Typing tells the conversation's other members the user is typing. It
	// must not block; it may drop the hint (the client sends at most one every
	// few seconds).
	Typing(conversationID string)
	// Presence returns whether the other members are online, or when they
	// were last seen.
	Presence(ctx context.Context, conversationID string) (wire.PresenceResponse, error)

	// Muted returns the conversations whose new messages ring nothing (kept
	// on this machine); SetMuted mutes or unmutes one.
	Muted(ctx context.Context) (map[string]bool, error)
	SetMuted(ctx context.Context, conversationID string, muted bool) error

	// Drafts returns the unsent text of each conversation, and InputHistory
	// what was sent from this device (oldest first), as kept on this machine
	// across restarts. SaveDrafts stores drafts (an empty text removes one);
	// AddInput records a text sent and removes the conversation's draft.
	Drafts(ctx context.Context) (map[string]string, error)
	InputHistory(ctx context.Context) (map[string][]string, error)
	SaveDrafts(ctx context.Context, drafts map[string]string) error
	AddInput(ctx context.Context, conversationID, text string) error
	// Profile returns a user's public profile (display name, status).
	Profile(ctx context.Context, userID string) (wire.Profile, error)

	// RetryNow cuts a reconnect wait short. It must not block.
	RetryNow()

	// Events delivers the session's events (client.Event: the one set the CLI
	// reads too); the TUI reads one at a time from a command and re-arms after
	// each (bubbletea's realtime pattern). A closed channel stops the reading.
	Events() <-chan client.Event
}

// Page is one page of history.
type Page struct {
	Messages []wire.Message // oldest first, all stored (seq_no > 0)
	More     bool           // older messages may exist
	// Pending holds the messages typed but not yet stored by the server (the
	// outbox), oldest first; only filled for the newest page (beforeSeq 0).
	Pending []wire.Message
	// Refused: why the server refused some of Pending for good, by message_id.
	Refused map[string]string
	// Stale: the server could not be asked, so this is what the cache had.
	Stale bool
}
