package server

import (
	"context"
	"time"
)

// Store is the durable tables of the data model (docs/architecture.md): users,
// tokens, invites, conversations, participants, messages (with the message_id
// idempotency record), message_status and pending_deliveries. Every method is
// one GetItem, one Query on a key or index, or one transaction; none scans.
// It is composed of one interface per concern, so a reader (or a test double)
// finds each table's contract in one place.
//
// Implementations: server/sqlite (embedded) and server/dynamo (production). Both
// pass the conformance suite in server/storetest.
type Store interface {
	AccountStore
	ConversationStore
	ChannelStore
	MessageStore
	BoundaryStore
	InboxStore
	IdentityStore
	MediaStore
	MentionSettingStore
	Close() error
}

// MentionSettingStore holds a group's one mention setting: whether @all and
// @here are for its admins only (server/mentions.go).
type MentionSettingStore interface {
	// MentionAllAdminsOnly is false for a group never set (and for any
	// conversation the store has no setting for).
	MentionAllAdminsOnly(ctx context.Context, convID string) (bool, error)
	SetMentionAllAdminsOnly(ctx context.Context, convID string, adminsOnly bool) error // ErrNotFound: no such conversation
}

// IdentityStore holds the store's identity: a random id that a restore from a
// backup, or a rollback of the tables (a DynamoDB point-in-time restore),
// replaces, so that clients holding messages the store no longer has can tell
// (the hello frame says it; docs/self-hosting.md, "Restores and clients").
type IdentityStore interface {
	// StoreID returns the store's id, making one on the first call to a
	// store that has none (a new store, or one from before ids). Errors
	// wrap ErrNewerSchema when the store was made by a newer build.
	StoreID(ctx context.Context) (string, error)
	// RotateStoreID gives the store a new random id and returns it: the
	// operator's step after rolling the store back. Nodes read the id when
	// they start, so restart them after it.
	RotateStoreID(ctx context.Context) (string, error)
}

// AccountStore holds users, login tokens and invites.
type AccountStore interface {
	// CreateUser stores u, checking and consuming claim in the same write.
	// Errors: ErrExists (id taken), ErrNotFirst (claim.First but the server has
	// its first account), ErrBadInvite.
	CreateUser(ctx context.Context, u User, claim Claim) error
	GetUser(ctx context.Context, id string) (User, error) // ErrNotFound
	// FirstUser returns the id of the account that claimed the server (its
	// first, made admin); ErrNotFound while there is none.
	FirstUser(ctx context.Context) (string, error)
	// ClaimNameKeys gives userID those of keys no account holds yet (the
	// keys of accounts made before keys were kept); ErrConfusable when
	// another account holds one (the others are still claimed).
	ClaimNameKeys(ctx context.Context, userID string, keys []string) error
	// UpdateProfile changes the non-nil fields and returns the user as stored.
	UpdateProfile(ctx context.Context, id string, change ProfileChange) (User, error)
	PutInvite(ctx context.Context, inv Invite) error
	PutToken(ctx context.Context, t Token) error
	GetToken(ctx context.Context, hash string) (Token, error) // ErrNotFound, also when expired
	DeleteToken(ctx context.Context, hash string) error       // no error if absent

	// Administration: rare, by a server admin, so a scan is allowed (the
	// DynamoDB store scans the users, tokens and invites tables).
	ListUsers(ctx context.Context) ([]User, error) // by id
	// DeleteUserTokens ends every session of a user (logins made after it are new).
	DeleteUserTokens(ctx context.Context, userID string) error
	// DisableUserTokens marks every token of a user Disabled (GetToken still
	// finds them; PutToken's later ones are not).
	DisableUserTokens(ctx context.Context, userID string) error
	ListInvites(ctx context.Context) ([]Invite, error)   // unexpired, newest first
	DeleteInvite(ctx context.Context, hash string) error // ErrNotFound
}

// ConversationStore holds conversations and their participants.
type ConversationStore interface {
	// CreateConversation stores c and its participants in one write; ErrExists if
	// the id is taken (a direct conversation created twice).
	CreateConversation(ctx context.Context, c Conversation, members []Participant) error
	GetConversation(ctx context.Context, id string) (Conversation, error)            // ErrNotFound
	GetParticipant(ctx context.Context, convID, userID string) (Participant, error)  // ErrNotFound
	ListParticipants(ctx context.Context, convID string) ([]Participant, error)      // by user id
	AddParticipants(ctx context.Context, convID string, members []Participant) error // existing members are kept as they are
	RemoveParticipant(ctx context.Context, convID, userID string) error              // ErrNotFound
}

// MessageStore holds messages, keyed by (conversation_id, seq_no), their
// message_id idempotency record, and the media they link. A message_id is
// unique within its conversation, and its record keeps who sent it: the
// Service answers the sender's resend with the first answer and refuses the
// same id from another member (message_id_taken), so a store reports the
// original whoever sent it.
type MessageStore interface {
	// AppendMessage is the send transaction: it stores m
	// only if m.SeqNo is above the conversation's last_seq (so it is free, and no
	// message is ever stored behind a newer one: stored order is seq order) and
	// (conversation_id, message_id) is new; moves the conversation's last_seq and
	// preview to m; moves the sender's last_delivered_seq and last_read_seq up to m.SeqNo
	// (a reply implies read); and for each receiver records pending_deliveries
	// (first_undelivered_seq kept if already set). All or nothing, with one
	// exception: a store whose atomic write cannot hold every receiver's pending
	// row (DynamoDB: a group of more than 47 receivers) writes the rest after that
	// write has committed, and answers nil once it has: the message is stored and
	// must never look failed. Those rows are written idempotently and retried in
	// the background until they are in or the store closes.
	//
	// An event (m.IsEvent()) is stored the same way, and in the same write is
	// applied to its target's row, which must be a message (no Kind) at
	// UpdatedSeq == m.BaseSeq and not deleted (and for an edit or delete, at
	// S3Ref == m.BaseRef): a reaction sets or (content "")
	// removes the sender's entry in Reactions; an edit replaces Content and
	// sets Edited; a delete clears Content, Attachment, Reactions and S3Ref,
	// sets Deleted, and clears the content of the target's earlier edits
	// (DynamoDB: right after the commit, retried until done). All three set the
	// target's UpdatedSeq to m.SeqNo, and an edit clears its S3Ref (the row
	// holds the content again; the Service removes the old blob). An event
	// moves last_seq but not the preview, unless it is an edit or delete of the
	// message the preview shows; it never moves the participants' activity.
	// A message's Mentions are stored with it and counted in the same write:
	// m.SeqNo joins the MentionSeqs of each receiver it names, and, for
	// wire.MentionAll or MentionHere, of every member (InboxEntry.MentionSeqs;
	// the sender's own read boundary is at m.SeqNo, so it never counts for
	// them).
	// A membership event (wire.IsMembershipKind) has no target: it applies
	// its change to the participants or the conversation in the same write
	// (membership_events.go, MembershipEvent, has the rules), and answers
	// ErrTargetChanged when the members are no longer as the Service saw
	// them.
	// Errors: ErrSeqTaken (m.SeqNo <= last_seq: the counter is behind), a
	// *DuplicateError (with the stored original, SenderID included, which may
	// be another member's), ErrNotFound (no such conversation), ErrTargetChanged.
	AppendMessage(ctx context.Context, m Message, receivers []string) error
	// NextSeq is the fallback counter: an atomic increment of a counter on the
	// conversation item, used when the Sequencer is unavailable.
	NextSeq(ctx context.Context, convID string) (int64, error)
	// ListMessages returns up to limit messages with seq_no < beforeSeq, newest
	// first; beforeSeq <= 0 means from the newest.
	ListMessages(ctx context.Context, convID string, beforeSeq int64, limit int) ([]Message, error)
	// ListMessagesAfter returns up to limit messages with seq_no > afterSeq, oldest first.
	ListMessagesAfter(ctx context.Context, convID string, afterSeq int64, limit int) ([]Message, error)
	// SentMessages returns, by message_id, those of messageIDs already stored in
	// convID, from the idempotency record (at least SeqNo, MessageID, SenderID
	// and Timestamp set; for a reaction, Kind and Content too: how its toggle
	// went): the first answers to resends by their sender. The send path asks before it
	// takes seq_nos, so a resend costs no number and no rate token.
	SentMessages(ctx context.Context, convID string, messageIDs []string) (map[string]Message, error)
	// LinkMedia records that mediaID is sent in convID by the message
	// messageID (idempotent); written before the message, so a stored
	// attachment is always linked. It marks the upload sent (the sweep of
	// unsent uploads never takes it then) and adds the message to its
	// carriers, a set: an upload the same user sends in two messages is kept
	// until both are deleted. It returns the upload's link count after this
	// link, which UnlinkMedia takes (0 for media without an upload record).
	// It fails with ErrNotFound when the upload is expiring, or when there is
	// no upload record and no earlier link: media sent before uploads were
	// recorded can still be sent again.
	LinkMedia(ctx context.Context, mediaID, convID, messageID string) (links int64, err error)
	// UnlinkMedia undoes LinkMedia for a send that was not stored: the
	// message leaves the carriers, and an upload no message carries any more
	// is unsent again, from now (at): its sender's resend with the same
	// message_id within the grace period finds it, and the sweep of unsent
	// uploads deletes it otherwise. Only if nothing linked the upload since
	// (its link count is still links): a resend racing this one may have
	// linked it for a message that is stored. ErrNotApplied when it changed
	// nothing.
	UnlinkMedia(ctx context.Context, mediaID, convID, messageID string, links int64, at time.Time) error
	// ReleaseMedia takes the message (convID, messageID), just deleted, from
	// a sent upload's carriers; when no message carries it any more it marks
	// it expiring and returns it: its blob is then deleted and DropMedia
	// gives its bytes back, as after the sweep (which finishes the work if
	// this pass is cut short). ErrNotApplied while another message carries
	// it, or one sent before carriers were recorded may (it stays).
	// ErrNotFound without a record. Releasing an expiring upload again
	// returns it.
	ReleaseMedia(ctx context.Context, mediaID, convID, messageID string) (MediaUpload, error)
	// MediaConversations lists the conversations mediaID was sent in: their
	// members may fetch it.
	MediaConversations(ctx context.Context, mediaID string) ([]string, error)
	// CountMessages counts the stored messages (not events) with
	// afterSeq < seq_no <= upTo, stopping at limit. Unread counts count messages this way: a seq_no taken
	// by a write that then failed is a gap, and never counts.
	CountMessages(ctx context.Context, convID string, afterSeq, upTo int64, limit int) (int, error)
}

// BoundaryStore holds message_status (each member's delivered and read
// boundaries) and pending_deliveries (what each receiver has not acked).
type BoundaryStore interface {
	// ListStatuses returns the boundaries of the given users in a conversation;
	// a user with no row gets zeros.
	ListStatuses(ctx context.Context, convID string, userIDs []string) ([]Status, error)
	// AdvanceStatus moves userID's boundaries forward to at least delivered and read
	// (read implies delivered; a value of 0 leaves that boundary alone), never
	// down, and clears the user's pending_deliveries row when every pending
	// message is now delivered. changed says whether a boundary moved.
	AdvanceStatus(ctx context.Context, userID, convID string, delivered, read int64) (st Status, changed bool, err error)
	// ListPending returns the user's pending_deliveries rows.
	ListPending(ctx context.Context, userID string) ([]Pending, error)
}

// InboxStore reads a user's conversations through the participants index.
type InboxStore interface {
	// Inbox returns up to limit of the user's conversations, most recent activity
	// first, with the user's own boundaries (participants index).
	Inbox(ctx context.Context, userID string, limit int) ([]InboxEntry, error)
	// InboxEntries returns the entries for the given conversation ids in that order,
	// skipping conversations the user is not in.
	InboxEntries(ctx context.Context, userID string, convIDs []string) ([]InboxEntry, error)
}

// BatchAppender is an optional Store capability: AppendMessage for several
// messages (never events) of one sender to one conversation, with ascending seq_nos, in one
// durable write (server/sqlite: one group-commit job; server/dynamo: one
// transaction). A resend in the batch (a stored message_id, or one that appears
// twice) is not an error: dups[i] holds its original (which may be another
// member's message: the Service refuses that one) and its seq_no stays
// unused; the rest are stored.
// Any other failure stores nothing: ErrSeqTaken (a seq_no at or below last_seq,
// or any batch the store can only write one message at a time), ErrNotFound.
// After ErrSeqTaken the Service stores the messages one at a time with fresh
// seq_nos. A Store without it gets one AppendMessage per message.
type BatchAppender interface {
	AppendMessages(ctx context.Context, msgs []Message, receivers []string) (dups []*DuplicateError, err error)
	// MaxAppend is the most messages one AppendMessages call should hold for a
	// conversation of that many members; the Service stores a longer batch in
	// calls of at most that many (fewer than 2: one at a time).
	MaxAppend(members int) int
}

// QueuedAppender is a BatchAppender whose writes go through one queue and are
// applied in the order they were queued (server/sqlite: its single writer).
// QueueAppend queues the write of AppendMessages and returns at once; wait
// returns when it is durable, with what AppendMessages would have returned.
// The Service queues a conversation's write under the conversation's lock and
// waits outside it, so the conversation's next send can join the same commit
// instead of waiting for this one's (docs/benchmarks.md, session 13).
type QueuedAppender interface {
	BatchAppender
	QueueAppend(ctx context.Context, msgs []Message, receivers []string) (wait func() ([]*DuplicateError, error))
}

// SenderAcker is a Store that applies Message.SenderAck in the write that
// appends the message: the sender's pending deliveries up to it are cleared
// with the message, as an ack would clear them. For a Store without it the
// Service applies the ack after the write (AdvanceStatus), as for an ack frame.
type SenderAcker interface {
	StoresSenderAck()
}

// ColdStore is what the archiver needs from a Store to move old rows
// (messages and events) to the cold tier (BlobStore after 30 days). It is
// optional: a Store without it keeps every row hot.
//
// The archiver is incremental: each conversation keeps a watermark,
// archived_through, below which every row is archived (or has nothing to
// move), and the store keeps an index of the conversations with rows after
// their watermark, by when the first of them was stored. A pass reads that
// index, and for each conversation due the rows after its watermark
// (MessageStore.ListMessagesAfter): its cost follows what it archives, not
// the size of the messages table.
type ColdStore interface {
	// ArchiveDue lists up to limit conversations with rows after their
	// watermark stored before cutoff, as far as the store knows: oldest
	// first; a conversation whose rows after the watermark have not been
	// looked at yet (it had none, then got some) is due too.
	ArchiveDue(ctx context.Context, cutoff time.Time, limit int) ([]ArchiveDue, error)
	// AdvanceArchive moves convID's watermark up to through (never down) and
	// records when its next row was stored: next, or, when next is zero,
	// that no row follows through (the conversation leaves the index unless
	// a row was stored meanwhile).
	AdvanceArchive(ctx context.Context, convID string, through int64, next time.Time) error
	// MarkArchived clears m's content and records where it went (ref); the
	// row keeps its key, sender and timestamp. m is a message or an event.
	// Only if m is still as listed (UpdatedSeq, not deleted, its content
	// still there: a delete clears the content of its target's edits):
	// ErrTargetChanged if an edit or delete came in between, ErrNotFound if
	// there is no such row.
	MarkArchived(ctx context.Context, m Message, ref string) error
	// EditSeqs returns the seqs of targetSeq's edits, in order: a delete of
	// the message removes their archived text with its own (an archived
	// event's blob key follows from its seq).
	EditSeqs(ctx context.Context, convID string, targetSeq int64) ([]int64, error)
}

// ArchiveDue is a conversation the archiver has rows to look at in: those
// after ArchivedThrough.
type ArchiveDue struct {
	ConversationID  string
	ArchivedThrough int64
}

// Leaser is a Store shared by several nodes that lets one of them at a time
// run a background job (the archiver): without it every node would do the same
// work, and a pass over the messages table costs reads in proportion to the
// table. A Store only one node uses (the embedded one) does not need it. The
// lease is a saving, not a lock anything depends on for correctness: two
// archivers at once still archive each row once (MarkArchived is
// conditional, the watermark never moves down), at twice the reads.
type Leaser interface {
	// TakeLease gives the lease name to owner until until, or extends it if
	// owner holds it already. It reports false, with no error, while another
	// owner holds it and its expiry is not before now: a node that dies
	// keeps it only until then.
	TakeLease(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	// ReleaseLease gives up owner's lease, so that another node need not wait
	// for its expiry; it does nothing if owner does not hold it.
	ReleaseLease(ctx context.Context, name, owner string) error
}

// MediaUpload is the record of one upload: reserved by POST /v1/media (its
// size declared, and counted against the owner's quota from then on), sent
// once a message carries it.
type MediaUpload struct {
	MediaID   string
	Owner     string
	Size      int64
	CreatedAt time.Time
	Sent      bool
}

// MediaUsage is a user's media account: what the quota and the byte rate are
// checked against.
type MediaUsage struct {
	Bytes   int64 // of the user's recorded uploads, sent or not
	Uploads int64
	// RateAt is the byte-rate limiter's state (a generic cell rate
	// algorithm's theoretical arrival time): uploads are allowed while it is
	// at most the burst ahead of now.
	RateAt time.Time
	// Version changes with every ReserveMedia: its condition.
	Version int64
}

// MediaStore holds the upload records and each user's usage. Only unsent
// uploads are read by the sweep, through an index of them: a pass costs the
// unsent uploads it finds, not the table.
type MediaStore interface {
	// MediaUsage returns userID's usage; the zero value for a user who never
	// uploaded.
	MediaUsage(ctx context.Context, userID string) (MediaUsage, error)
	// ReserveMedia records up and sets its owner's usage to next, in one
	// write, only if the usage is still was (its Version): ErrRaced
	// otherwise (another reservation or a sweep came in between; read and
	// try again). ErrExists if up.MediaID is recorded already.
	ReserveMedia(ctx context.Context, up MediaUpload, was, next MediaUsage) error
	// UnsentMedia returns up to limit uploads made before `before` and not
	// sent (expiring ones too, so a sweep cut short is finished by the next),
	// oldest first.
	UnsentMedia(ctx context.Context, before time.Time, limit int) ([]MediaUpload, error)
	// ExpireMedia marks an unsent upload expiring: from then on no send can
	// carry it. ErrNotApplied if it was sent; ErrNotFound if there is no
	// record. Marking an expiring upload again is no error.
	ExpireMedia(ctx context.Context, mediaID string) error
	// DropMedia deletes an expiring upload's record and gives its bytes back
	// to the owner's usage, in one write (after its blob was deleted), and
	// its links first (a released upload was sent: without them it could
	// be linked again as media sent before uploads were recorded). A record
	// already gone is no error, and counts nothing twice.
	DropMedia(ctx context.Context, up MediaUpload) error
}
