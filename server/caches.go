package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the per-node caches. Both only save store reads: an entry dropped
// is read again (members) or checked against the store (last_seq), so a node
// with more active conversations than this stays correct, and its memory does
// not grow with every conversation it ever served.
const (
	maxMemberLists = 20_000  // a group's list can hold thousands of ids
	maxLastSeqs    = 200_000 // one counter each
)

// generations is a map bounded to about limit entries that keeps the recently
// used ones: entries live in a current and a previous generation; a lookup that
// finds one in the previous generation moves it to the current one, and when
// the current one reaches limit/2 it becomes the previous one (the old previous
// one, whatever was not used since, is dropped). Reads and writes are sync.Map
// operations: no lock on the send path.
type generations[V any] struct {
	limit int64
	mu    sync.Mutex // held only to rotate
	cur   atomic.Pointer[generation[V]]
	prev  atomic.Pointer[generation[V]]
}

type generation[V any] struct {
	m sync.Map // string → V
	n atomic.Int64
}

func newGenerations[V any](limit int) *generations[V] {
	g := &generations[V]{limit: int64(max(limit, 2))}
	g.cur.Store(new(generation[V]))
	g.prev.Store(new(generation[V]))
	return g
}

// load returns key's value, moving it to the current generation if it was
// only in the previous one.
func (g *generations[V]) load(key string) (V, bool) {
	if v, ok := g.cur.Load().m.Load(key); ok {
		return v.(V), true
	}
	if v, ok := g.prev.Load().m.Load(key); ok {
		return g.loadOrStore(key, v.(V)), true
	}
	var zero V
	return zero, false
}

// loadOrStore returns key's value in the current generation, storing v there
// if it has none.
func (g *generations[V]) loadOrStore(key string, v V) V {
	cur := g.cur.Load()
	got, loaded := cur.m.LoadOrStore(key, v)
	if !loaded {
		g.added(cur)
	}
	return got.(V)
}

// store sets key's value in the current generation.
func (g *generations[V]) store(key string, v V) {
	cur := g.cur.Load()
	if _, loaded := cur.m.Swap(key, v); !loaded {
		g.added(cur)
	}
}

func (g *generations[V]) delete(key string) {
	g.cur.Load().m.Delete(key)
	g.prev.Load().m.Delete(key)
}

func (g *generations[V]) added(cur *generation[V]) {
	if cur.n.Add(1) < g.limit/2 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur.Load() == cur { // not rotated meanwhile by another writer
		g.prev.Store(cur)
		g.cur.Store(new(generation[V]))
	}
}

// memberCache keeps conversation member lists for a few seconds, so the send path
// does not read participants on every message. Changes on this node invalidate at
// once; other nodes drop them when they hear the change's revocation
// (Revocation.Conversations), or within the TTL when it is lost.
//
// Past the TTL, a list is used only while the store cannot be read (getStale),
// and only if it was read in the revocation epoch this node hears now with no
// revocation heard during its read: a member removed since was revoked, and
// the node dropped the list (the same rule as the token cache's, tokens.go).
type memberCache struct {
	ttl  time.Duration
	g    *generations[memberEntry]
	rev  Revocations   // nil: no list is used past its TTL
	seen atomic.Uint64 // revocations heard
}

func newMemberCache(ttl time.Duration) memberCache {
	return memberCache{ttl: ttl, g: newGenerations[memberEntry](maxMemberLists)}
}

type memberEntry struct {
	users []string
	at    time.Time
	// stale: the list may be used past its TTL in this revocation epoch.
	stale bool
	epoch uint64
}

// memberMark is taken before a list is read from the store and handed to put.
type memberMark struct {
	seen, epoch uint64
	ok          bool
}

func (c *memberCache) mark() memberMark {
	if c.rev == nil {
		return memberMark{}
	}
	epoch, ok := c.rev.Hearing()
	return memberMark{seen: c.seen.Load(), epoch: epoch, ok: ok}
}

func (c *memberCache) get(convID string, now time.Time) ([]string, bool) {
	e, ok := c.g.load(convID)
	if !ok || now.Sub(e.at) > c.ttl {
		return nil, false
	}
	return e.users, true
}

// getStale is get without the TTL, for answering while the store is out.
func (c *memberCache) getStale(convID string) ([]string, bool) {
	if c.rev == nil {
		return nil, false
	}
	epoch, ok := c.rev.Hearing()
	if !ok {
		return nil, false
	}
	e, ok := c.g.load(convID)
	if !ok || !e.stale || e.epoch != epoch {
		return nil, false
	}
	return e.users, true
}

func (c *memberCache) put(m memberMark, convID string, users []string, now time.Time) {
	e := memberEntry{users: users, at: now}
	if m.ok && c.seen.Load() == m.seen {
		if epoch, ok := c.rev.Hearing(); ok && epoch == m.epoch {
			e.stale, e.epoch = true, epoch
		}
	}
	c.g.store(convID, e)
	// A revocation heard while storing: revoke counts before it deletes, so
	// either it deletes this entry or this sees its count and does.
	if e.stale && c.seen.Load() != m.seen {
		c.g.delete(convID)
	}
}

func (c *memberCache) forget(convID string) { c.g.delete(convID) }

// revoke drops the lists of the conversations whose members changed.
func (c *memberCache) revoke(r Revocation) {
	c.seen.Add(1)
	for _, conv := range r.Conversations {
		c.g.delete(conv)
	}
}

// lastSeqCache remembers the highest seq_no this node has stored or seen per
// conversation, so acks and reads can be checked against it without a read; a
// claim above it is checked against the store.
// Values are *atomic.Int64: raising one moves a number in place, where storing
// a new int64 boxed it and allocated a map entry on every message. A raise on
// an entry being dropped may be lost: the value only ever errs low, which costs
// a store read, never a wrong answer.
type lastSeqCache struct{ g *generations[*atomic.Int64] }

func newLastSeqCache() lastSeqCache {
	return lastSeqCache{g: newGenerations[*atomic.Int64](maxLastSeqs)}
}

func (c *lastSeqCache) get(convID string) int64 {
	if v, ok := c.g.load(convID); ok {
		return v.Load()
	}
	return 0
}

// known reports whether this node has seen the conversation exist.
func (c *lastSeqCache) known(convID string) bool {
	_, ok := c.g.load(convID)
	return ok
}

func (c *lastSeqCache) raise(convID string, seq int64) {
	n, ok := c.g.load(convID)
	if !ok {
		n = c.g.loadOrStore(convID, new(atomic.Int64))
	}
	for {
		cur := n.Load()
		if cur >= seq || n.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// clear drops every entry.
func (g *generations[V]) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prev.Store(new(generation[V]))
	g.cur.Store(new(generation[V]))
}
