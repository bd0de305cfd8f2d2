package redis

import (
	"context"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"
)

var _ goredis.Hook = (*RoundTrips)(nil)

// RoundTrips is a go-redis hook that counts round trips to Redis: one per
// command sent on its own, one per pipeline or MULTI/EXEC transaction. Install
// it with Client.Universal().AddHook (tests count a send's round trips with it;
// docs/production.md has the figures).
//
// It counts what the caller waits for, not packets: the one retry go-redis
// makes after a broken connection is not counted, nor a Cluster's MOVED or ASK
// redirections. On a Cluster client a pipeline whose commands live on several
// shards is sent as one pipeline per shard, concurrently, and counts once:
// its latency is that of one round trip (the slowest shard's).
type RoundTrips struct{ n atomic.Int64 }

// Load is the number of round trips counted so far.
func (r *RoundTrips) Load() int64 { return r.n.Load() }

func (r *RoundTrips) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (r *RoundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *RoundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}
