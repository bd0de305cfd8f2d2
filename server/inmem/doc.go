// Package inmem holds the in-process implementations of the fast roles (docs/architecture.md)
// (sequence counters, rate limits, inbox index, profile cache, connection registry
// and cross-node routing). They are the embedded default and work on ONE NODE ONLY:
// nothing is shared with other processes and everything is lost on restart, which
// the roles tolerate (the store is the truth; see server/roles.go). For several
// nodes use server/redis.
//
// Every type is safe for concurrent use. The send path calls Sequencer.Next,
// RateLimiter.Allow, InboxIndex.Touch and Registry.Nodes for every message, so the
// state is split over shards, each with its own lock, and those calls do not
// allocate in the steady state.
package inmem

import (
	"errors"
	"hash/maphash"
)

// nShards is a power of two well above the core count, so two goroutines rarely
// contend for one lock.
const nShards = 64

var hashSeed = maphash.MakeSeed()

func shardOf(key string) uint64 { return maphash.String(hashSeed, key) & (nShards - 1) }

// errEmpty is returned for an empty id: it would otherwise silently become a key
// shared by every caller that forgot to set it.
var errEmpty = errors.New("inmem: empty id")
