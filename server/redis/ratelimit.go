package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.RateLimiter = (*RateLimiter)(nil)

// RateLimiter is the design's rate:<user> INCR with a 1 s TTL, in one MULTI/EXEC
// round trip: INCR, PEXPIRE 1000 NX (only the first event of a window starts
// the clock, so a busy key still expires), PTTL for the retry hint.
type RateLimiter struct{ c *Client }

// RateLimiter returns the rate limiter.
func (c *Client) RateLimiter() *RateLimiter { return &RateLimiter{c} }

func (r *RateLimiter) Allow(ctx context.Context, key string, limit int) (bool, time.Duration, error) {
	allowed, retry, err := r.AllowN(ctx, key, 1, limit)
	return allowed == 1, retry, err
}

// AllowN is INCRBY n in the same round trip as Allow's INCR.
func (r *RateLimiter) AllowN(ctx context.Context, key string, n, limit int) (int, time.Duration, error) {
	if key == "" {
		return 0, 0, errEmpty
	}
	if limit < 1 || n < 1 {
		return 0, 0, fmt.Errorf("redis rate limit %q: limit %d and count %d must be at least 1", key, limit, n)
	}
	k := r.c.key("rate", key)
	var incr *goredis.IntCmd
	var pttl *goredis.DurationCmd
	err := r.c.do(ctx, "rate", func(ctx context.Context) error {
		_, err := r.c.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			incr = p.IncrBy(ctx, k, int64(n))
			p.Do(ctx, "PEXPIRE", k, 1000, "NX")
			pttl = p.PTTL(ctx, k)
			return nil
		})
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	allowed := min(max(int64(limit)-(incr.Val()-int64(n)), 0), int64(n))
	if allowed == int64(n) {
		return n, 0, nil
	}
	return int(allowed), windowEndsIn(pttl.Val()), nil
}

// windowEndsIn is the retry hint for a window key whose PTTL is pttl. Redis
// keeps a key through the last millisecond of its TTL (it expires once the
// clock passes it), so the window ends a millisecond after PTTL: a client
// that waited PTTL alone was refused again, with a hint of 1 ms. A PTTL of 0
// or less (no expiry, which PEXPIRE NX rules out) is treated as 0.
func windowEndsIn(pttl time.Duration) time.Duration {
	return min(max(pttl, 0), time.Second) + time.Millisecond
}
