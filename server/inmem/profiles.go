package inmem

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.ProfileCache = (*ProfileCache)(nil)

// Defaults of ProfileCache (TTL 1 h plus jitter, so entries cached in
// one burst do not all expire together).
const (
	DefaultProfileTTL    = time.Hour
	DefaultProfileJitter = 6 * time.Minute
)

// ProfileCache keeps profiles for a TTL plus a random jitter.
type ProfileCache struct {
	ttl, jitter time.Duration
	now         func() time.Time
	shards      [nShards]profileShard
}

type profileShard struct {
	mu      sync.Mutex
	m       map[string]profileEntry
	sweptAt int64
	_       [32]byte
}

type profileEntry struct {
	p   server.Profile
	exp int64 // unix nanos
}

// NewProfileCache returns a cache keeping entries for ttl plus up to jitter
// (zero: the defaults), reading time from now (nil: time.Now).
func NewProfileCache(ttl, jitter time.Duration, now func() time.Time) *ProfileCache {
	if ttl <= 0 {
		ttl = DefaultProfileTTL
	}
	if jitter <= 0 {
		jitter = DefaultProfileJitter
	}
	if now == nil {
		now = time.Now
	}
	return &ProfileCache{ttl: ttl, jitter: jitter, now: now}
}

// Get returns the cached profile, or false when absent or expired.
func (c *ProfileCache) Get(_ context.Context, userID string) (server.Profile, bool, error) {
	now := c.now().UnixNano()
	sh := &c.shards[shardOf(userID)]
	sh.mu.Lock()
	e, ok := sh.m[userID]
	if ok && now >= e.exp {
		delete(sh.m, userID)
		ok = false
	}
	sh.mu.Unlock()
	if !ok {
		return server.Profile{}, false, nil
	}
	return e.p, true, nil
}

// Set caches p until the TTL plus jitter from now.
func (c *ProfileCache) Set(_ context.Context, p server.Profile) error {
	if p.UserID == "" {
		return fmt.Errorf("profile cache set: %w", errEmpty)
	}
	now := c.now().UnixNano()
	exp := now + int64(c.ttl) + rand.Int64N(int64(c.jitter)+1)
	sh := &c.shards[shardOf(p.UserID)]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string]profileEntry)
		sh.sweptAt = now
	}
	sh.m[p.UserID] = profileEntry{p: p, exp: exp}
	// Entries nobody reads again would otherwise stay: sweep once per TTL.
	if now-sh.sweptAt >= int64(c.ttl) {
		for k, v := range sh.m {
			if now >= v.exp {
				delete(sh.m, k)
			}
		}
		sh.sweptAt = now
	}
	sh.mu.Unlock()
	return nil
}

// Delete drops the user's entry (profile updated).
func (c *ProfileCache) Delete(_ context.Context, userID string) error {
	sh := &c.shards[shardOf(userID)]
	sh.mu.Lock()
	delete(sh.m, userID)
	sh.mu.Unlock()
	return nil
}
