package server

import (
	"sync"
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
type lastSeqCache struct{ m sync.Map }

func (c *lastSeqCache) get(convID string) int64 {
	if v, ok := c.m.Load(convID); ok {
		return v.(int64)
	}
	return 0
}

// known reports whether this node has seen the conversation exist.
func (c *lastSeqCache) known(convID string) bool {
	_, ok := c.m.Load(convID)
	return ok
}

func (c *lastSeqCache) raise(convID string, seq int64) {
	for {
		v, loaded := c.m.LoadOrStore(convID, seq)
		if !loaded || v.(int64) >= seq || c.m.CompareAndSwap(convID, v, seq) {
			return
		}
	}
}
