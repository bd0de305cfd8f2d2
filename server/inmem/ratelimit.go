package inmem

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.RateLimiter = (*RateLimiter)(nil)

// RateLimiter counts events per key in fixed one-second windows, each starting at
// the key's first event after the previous window ended: the same semantics as
// Redis INCR with a 1 s expiry set on the first increment.
type RateLimiter struct {
	now    func() time.Time
	shards [nShards]rateShard
}

type rateShard struct {
	mu      sync.Mutex
	m       map[string]rateWindow
	sweptAt int64 // unix nanos of the last sweep of expired windows
	_       [32]byte
}

type rateWindow struct {
	end int64 // unix nanos
	n   int
}

// NewRateLimiter returns a RateLimiter reading time from now (nil: time.Now).
func NewRateLimiter(now func() time.Time) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{now: now}
}

// sweepEvery bounds how long expired windows linger: memory stays proportional to
// the keys active in the last few seconds, and a sweep's cost is spread thin.
const sweepEvery = int64(5 * time.Second)

// Allow counts one event for key; when the window already holds limit events it
// reports false and the time until the window ends.
func (r *RateLimiter) Allow(ctx context.Context, key string, limit int) (bool, time.Duration, error) {
	allowed, retry, err := r.AllowN(ctx, key, 1, limit)
	return allowed == 1, retry, err
}

// AllowN counts n events for key and says how many of them (the first ones)
// fit in the window's limit, and, when not all, the time until it ends.
func (r *RateLimiter) AllowN(_ context.Context, key string, n, limit int) (int, time.Duration, error) {
	if key == "" {
		return 0, 0, fmt.Errorf("rate limit: %w", errEmpty)
	}
	if limit < 1 || n < 1 {
		return 0, 0, fmt.Errorf("rate limit %q: limit %d and count %d must be at least 1", key, limit, n)
	}
	now := r.now().UnixNano()
	sh := &r.shards[shardOf(key)]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string]rateWindow)
		sh.sweptAt = now
	}
	w, ok := sh.m[key]
	if !ok || now >= w.end {
		w = rateWindow{end: now + int64(time.Second)}
	}
	before := w.n
	w.n += n
	sh.m[key] = w
	if now-sh.sweptAt >= sweepEvery {
		for k, v := range sh.m {
			if now >= v.end {
				delete(sh.m, k)
			}
		}
		sh.sweptAt = now
	}
	sh.mu.Unlock()
	allowed := min(max(limit-before, 0), n)
	if allowed == n {
		return n, 0, nil
	}
	return allowed, time.Duration(w.end - now), nil
}
