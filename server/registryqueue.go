package server

import "context"

// PresenceChange is one connection's registry update as a queue carries it
// (docs/production.md, "Registry updates through Kafka"): its Add (Gone false)
// or its Remove (Gone true), with a Version its node gave it. A node numbers its
// changes in increasing order, and a connection's changes all come from its
// node, so the higher Version of one connection is the later change.
type PresenceChange struct {
	Presence
	Gone    bool
	Version int64
}

// VersionedRegistry is a Registry that also applies changes out of order and
// more than once (versions are below 2^53, which Redis's scripts compare
// exactly as numbers): Apply keeps, for each connection, the Version of the last
// change it applied, and skips a change no newer. So a replayed Add cannot
// bring back a connection whose Remove was applied, nor an old Remove take
// away a newer Add. What a skipped Remove would have set (LastSeen) is not set.
// The versions are kept for a day at least: a change older than that may be
// applied again.
type VersionedRegistry interface {
	Registry
	// Apply applies changes, in order; a change with an empty field is an
	// error and nothing is applied.
	Apply(ctx context.Context, changes []PresenceChange) error
}
