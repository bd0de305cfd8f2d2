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
// once; other nodes see them within the TTL.
type memberCache struct {
	ttl time.Duration
	g   *generations[memberEntry]
}

func newMemberCache(ttl time.Duration) memberCache {
	return memberCache{ttl: ttl, g: newGenerations[memberEntry](maxMemberLists)}
}

type memberEntry struct {
	users []string
	at    time.Time
}

func (c *memberCache) get(convID string, now time.Time) ([]string, bool) {
	e, ok := c.g.load(convID)
	if !ok || now.Sub(e.at) > c.ttl {
		return nil, false
	}
	return e.users, true
}

func (c *memberCache) put(convID string, users []string, now time.Time) {
	c.g.store(convID, memberEntry{users: users, at: now})
}

func (c *memberCache) forget(convID string) { c.g.delete(convID) }

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
