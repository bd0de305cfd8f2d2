package server

import (
	"context"
	"errors"
	"time"
)

// The fast, non-durable roles (docs/architecture.md). The embedded implementations
// (server/inmem) work on one node only; server/redis shares them between nodes.
// Each passes the conformance suite in server/roletest.

// Sequencer hands out seq_no per conversation (Redis INCR).
type Sequencer interface {
	// Next returns the next seq_no of the conversation.
	Next(ctx context.Context, convID string) (int64, error)
	// NextN takes the next n seq_nos of the conversation (n ≥ 1) at once and
	// returns the last of them: a batch of sends costs one call, not n.
	NextN(ctx context.Context, convID string, n int) (last int64, err error)
	// Reseed makes the counter at least last, so the next Next is above it. Called
	// with the stored last_seq when a seq_no collided (the counter was lost).
	Reseed(ctx context.Context, convID string, last int64) error
	// Release gives back the n numbers ending at last, taken and not used, if
	// none was taken after them (the counter is still at last): the next send
	// takes them, and clients wait on no gap. Otherwise it changes nothing.
	Release(ctx context.Context, convID string, last int64, n int) error
}

// RateLimiter counts sends per user in fixed one-second windows
// (rate:<user> INCR with a 1 s TTL).
type RateLimiter interface {
	// Allow counts one event for key and reports whether it is within limit per
	// second; when not, retryAfter is when the window ends.
	Allow(ctx context.Context, key string, limit int) (ok bool, retryAfter time.Duration, err error)
	// AllowN counts n events (n ≥ 1) at once and says how many of them, the
	// first ones, are within limit; when not all, retryAfter is when the window
	// ends. A batch of sends costs one call, not n.
	AllowN(ctx context.Context, key string, n, limit int) (allowed int, retryAfter time.Duration, err error)
}

// ErrCold is returned by an InboxIndex that does not hold a user's inbox (never
// built, evicted, flushed): the caller reads the store's index and rebuilds.
var ErrCold = errors.New("inbox index is cold for this user")

// InboxIndex keeps each user's conversations sorted by last activity (ZADD on
// send, ZREVRANGE to read). It is a cache: the store is the truth.
type InboxIndex interface {
	// Touch moves convID to at in the inbox of each user that has a warm inbox.
	Touch(ctx context.Context, userIDs []string, convID string, at time.Time) error
	// Top returns up to limit conversation ids, most recent first, or ErrCold.
	Top(ctx context.Context, userID string, limit int) ([]string, error)
	// Fill replaces the user's inbox with entries (from the store) and marks it warm.
	Fill(ctx context.Context, userID string, entries []InboxEntry) error
	// Forget drops convID from a user's inbox (left the group).
	Forget(ctx context.Context, userID, convID string) error
}

// ProfileCache caches users' public profiles (TTL 1 h plus jitter; DEL on
// update). Misses are loaded by the Service, one load per key at a time.
type ProfileCache interface {
	Get(ctx context.Context, userID string) (Profile, bool, error)
	Set(ctx context.Context, p Profile) error
	Delete(ctx context.Context, userID string) error
}

// Profile is the public part of a user.
type Profile struct {
	UserID       string
	DisplayName  string
	Status       string
	Admin        bool
	HidePresence bool
}

// Presence is one live connection of a user on a node.
type Presence struct {
	UserID string
	ConnID string
	NodeID string
}

// Registry is the connection registry (user → connections → node, and
// the reverse set per node for bulk cleanup when a node dies).
type Registry interface {
	Add(ctx context.Context, p Presence) error
	Remove(ctx context.Context, p Presence) error
	// Nodes returns, for each user with a live connection, the nodes it is on.
	// Users with none are absent: they are offline (pending_deliveries).
	Nodes(ctx context.Context, userIDs []string) (map[string][]string, error)
	// DropNode removes every entry of a node (it died or is shutting down).
	DropNode(ctx context.Context, nodeID string) error
	// LastSeen returns, for each user one of whose connections was ever
	// removed (a Remove, or the DropNode of its node), when that last
	// happened; users with no such record are absent. It is what "last seen"
	// shows for a user who is offline now; kept for LastSeenTTL.
	LastSeen(ctx context.Context, userIDs []string) (map[string]time.Time, error)
}

// LastSeenTTL is how long a registry keeps a user's last-seen time.
const LastSeenTTL = 90 * 24 * time.Hour

// Envelope is what one node hands another: a frame for some of its users.
// Frame is the encoded wire frame, so it is encoded once however many receive it.
type Envelope struct {
	UserIDs []string
	Frame   []byte
	// Lost is set (with no users or frame) by a Broker when publications to
	// this node may have been lost: its subscription was re-established after
	// a broken connection. The node then catches its connections up.
	Lost bool
	// Close asks the node to close the users' connections (4001: an admin
	// ended their sessions); no frame.
	Close bool
}

// Broker carries envelopes between nodes (Redis pub/sub per node in production;
// in one process it hands them straight to the local handler).
type Broker interface {
	Publish(ctx context.Context, nodeID string, env Envelope) error
	// Subscribe calls handle for every envelope published to nodeID until ctx ends.
	// It returns once the subscription is live.
	Subscribe(ctx context.Context, nodeID string, handle func(Envelope)) error
}

// Revocations carries token revocations to every node at once (one Redis
// pub/sub channel all nodes share in production; in one process, straight to
// the local handlers), so each node drops them from its token cache. A node
// caches tokens only while it hears every revocation: Hearing says when.
type Revocations interface {
	// Publish tells every subscribed node, this one included, of r.
	Publish(ctx context.Context, r Revocation) error
	// Subscribe calls handle for every revocation any node publishes until ctx
	// ends. It returns once the subscription is live or pending.
	Subscribe(ctx context.Context, handle func(Revocation)) error
	// Hearing reports whether this node hears every revocation now (ok), and
	// an epoch that changes whenever it may have missed one since (the
	// subscription broke). A token cached in one epoch is not used in another.
	Hearing() (epoch uint64, ok bool)
}

// Revocation is tokens voided (by hash: a logout) or every token of some
// users (an admin ended their sessions, disabled them or reset a password),
// or conversations whose members changed (their member lists are dropped).
type Revocation struct {
	TokenHashes   []string
	UserIDs       []string
	Conversations []string
}

// SendPath does a send's work on the fast roles in fewer calls than the roles
// one by one: on Redis, one round trip before the store write (Admit) and one
// after (Relay) instead of one per role and node. Optional (Backends.SendPath):
// without it the Service calls the roles. It must work on the same data as the
// Backends' Sequencer, Rate, Registry, Broker and Inbox.
type SendPath interface {
	// Admit counts n sends against key's limit per second (limit < 1: none),
	// as RateLimiter.AllowN, and takes seq_nos of convID for the ones let
	// through, as Sequencer.NextN.
	Admit(ctx context.Context, key string, limit int, convID string, n int) Admission
	// Relay hands frames, in order, to every node but self where users are
	// connected, as Registry.Nodes and Broker.Publish, and, when touch.At is
	// set, does touch as InboxIndex.Touch.
	Relay(ctx context.Context, self string, users []string, frames [][]byte, touch Touch) Relayed
}

// Admission is SendPath.Admit's answer.
type Admission struct {
	Allowed    int           // the first Allowed of the n sends are within the limit
	RetryAfter time.Duration // when Allowed < n, when the window ends
	RateErr    error         // the limit could not be counted: Allowed is n (rate limiting fails open)
	// Taken seq_nos end at Last: Allowed of them, or n when the backend had to
	// take them before it knew the limit's answer (the caller gives the extra
	// back with Sequencer.Release).
	Last   int64
	Taken  int
	SeqErr error // no seq_nos were taken
}

// Touch is an InboxIndex.Touch done with a Relay; none when At is zero.
type Touch struct {
	Users  []string
	ConvID string
	At     time.Time
}

// Relayed is SendPath.Relay's answer.
type Relayed struct {
	Online      map[string]bool // users with a connection anywhere; nil when RegistryErr
	RegistryErr error           // the nodes could not be looked up: nothing was published
	BrokerErr   error           // a publish failed
	TouchErr    error
}

// BlobStore holds media and cold messages (files on the embedded default, S3 in
// production). Keys are slash-separated paths.
type BlobStore interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
	Get(ctx context.Context, key string) ([]byte, error) // ErrNotFound
	// Delete removes key; no error if it is not there (a delete that is
	// retried after it worked is not a failure).
	Delete(ctx context.Context, key string) error
	// PresignPut and PresignGet return URLs a client can use directly for ttl.
	// A PUT URL takes exactly size bytes (size is signed into it), so an
	// upload is what its reservation counted against the quota.
	PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, error)
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// Notification tells an offline user about a new message (push for
// offline users).
type Notification struct {
	UserID         string
	ConversationID string
	SeqNo          int64
	SenderID       string
	Preview        string
	// Mention: the message names the user, or the group with @all (not
	// @here, which is for those online). A mention pushes whether or not the
	// user muted the conversation: mutes are the client's.
	Mention bool
}

// Pusher delivers notifications to users with no live connection (a webhook such
// as ntfy in server/webhook). Optional: nil means off, the embedded default.
type Pusher interface {
	Push(ctx context.Context, n Notification) error
}

// NodeKeeper is implemented by registries shared between nodes (the design's
// monitoring and cleaner): Keep heartbeats for this node and drops the entries of
// nodes whose heartbeat stopped (they crashed), through each node's reverse set,
// until ctx ends. When this node's own entries may be missing (an Add of it
// failed; the registry's store flushed or failed over to an empty replica; this
// node reaped while it was alive), it adds again those of live, the node's
// connections at that moment; and it retries this registry's removes that
// failed, so a connection that ended during an outage does not stay
// registered. The Service runs it when its Registry has it.
type NodeKeeper interface {
	Keep(ctx context.Context, nodeID string, live func() []Presence)
}
