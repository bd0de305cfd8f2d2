package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// memberCache keeps conversation member lists for a few seconds, so the send path
// does not read participants on every message. Changes on this node invalidate at
// once; other nodes see them within the TTL.
type memberCache struct {
	ttl time.Duration
	m   sync.Map // conversation id → memberEntry
}

type memberEntry struct {
	users []string
	at    time.Time
}

func (c *memberCache) get(convID string, now time.Time) ([]string, bool) {
	v, ok := c.m.Load(convID)
	if !ok {
		return nil, false
	}
	e := v.(memberEntry)
	if now.Sub(e.at) > c.ttl {
		return nil, false
	}
	return e.users, true
}

func (c *memberCache) put(convID string, users []string, now time.Time) {
	c.m.Store(convID, memberEntry{users: users, at: now})
}

func (c *memberCache) forget(convID string) { c.m.Delete(convID) }

// lastSeqCache remembers the highest seq_no this node has stored or seen per
// conversation, so acks and reads can be checked against it without a read; a
// claim above it is checked against the store.
// Values are *atomic.Int64: raising one moves a number in place, where storing
// a new int64 boxed it and allocated a map entry on every message.
type lastSeqCache struct{ m sync.Map }

func (c *lastSeqCache) get(convID string) int64 {
	if v, ok := c.m.Load(convID); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// known reports whether this node has seen the conversation exist.
func (c *lastSeqCache) known(convID string) bool {
	_, ok := c.m.Load(convID)
	return ok
}

func (c *lastSeqCache) raise(convID string, seq int64) {
	v, ok := c.m.Load(convID)
	if !ok {
		v, _ = c.m.LoadOrStore(convID, new(atomic.Int64))
	}
	n := v.(*atomic.Int64)
	for {
		cur := n.Load()
		if cur >= seq || n.CompareAndSwap(cur, seq) {
			return
		}
	}
}
