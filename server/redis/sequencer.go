package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.Sequencer = (*Sequencer)(nil)

// Sequencer is INCR on seq:{conv}. Counters have no TTL: one integer
// per conversation. If Redis loses them, the store's conditional write reports
// ErrSeqTaken and the Service calls Reseed with the stored last_seq.
type Sequencer struct{ c *Client }

// Sequencer returns the sequence counters.
func (c *Client) Sequencer() *Sequencer { return &Sequencer{c} }

var errEmpty = errors.New("redis: empty id")

// reseed sets the counter only if that raises it, atomically.
var reseed = goredis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`)

// release lowers the counter by ARGV[2] only if it is still at ARGV[1].
var release = goredis.NewScript(`
if tonumber(redis.call('GET', KEYS[1]) or '0') == tonumber(ARGV[1]) then redis.call('DECRBY', KEYS[1], ARGV[2]) end
return 0`)

func (s *Sequencer) Next(ctx context.Context, convID string) (int64, error) {
	if convID == "" {
		return 0, errEmpty
	}
	var n int64
	err := s.c.do(ctx, "seq next", func(ctx context.Context) (err error) {
		n, err = s.c.rdb.Incr(ctx, s.c.key("seq", convID)).Result()
		return err
	})
	return n, err
}

// NextN is INCRBY: n numbers in one round trip.
func (s *Sequencer) NextN(ctx context.Context, convID string, n int) (int64, error) {
	if convID == "" {
		return 0, errEmpty
	}
	if n < 1 {
		return 0, fmt.Errorf("redis: seq next %d: take at least one", n)
	}
	var last int64
	err := s.c.do(ctx, "seq next", func(ctx context.Context) (err error) {
		last, err = s.c.rdb.IncrBy(ctx, s.c.key("seq", convID), int64(n)).Result()
		return err
	})
	return last, err
}

func (s *Sequencer) Reseed(ctx context.Context, convID string, last int64) error {
	if convID == "" {
		return errEmpty
	}
	return s.c.do(ctx, "seq reseed", func(ctx context.Context) error {
		return s.c.eval(ctx, reseed, s.c.key("seq", convID), last).Err()
	})
}

func (s *Sequencer) Release(ctx context.Context, convID string, last int64, n int) error {
	if convID == "" {
		return errEmpty
	}
	if n < 1 || int64(n) > last {
		return fmt.Errorf("redis: seq release %d ending at %d: not numbers that were taken", n, last)
	}
	return s.c.do(ctx, "seq release", func(ctx context.Context) error {
		return s.c.eval(ctx, release, s.c.key("seq", convID), last, n).Err()
	})
}
