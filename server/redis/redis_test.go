package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/server/roletest"
)

// addr is the Redis the tests use (scripts/services.sh starts one).
func addr(t testing.TB) string {
	t.Helper()
	return testenv.RedisAddr(t)
}

func prefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test:" + hex.EncodeToString(b[:]) + ":"
}

// conformanceClient is a client for tests of behaviour, not of failure: the
// production timeouts (150 ms) are for failing fast, and a loaded CI machine
// can exceed them on a healthy Redis.
func conformanceClient(t testing.TB) *redis.Client {
	return client(t, redis.Options{CallTimeout: 5 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, DialTimeout: 2 * time.Second})
}

// client returns a Client on the test Redis with a key prefix of its own.
func client(t testing.TB, o redis.Options) *redis.Client {
	t.Helper()
	if len(o.Addrs) == 0 {
		o.Addrs = []string{addr(t)}
	}
	if o.Prefix == "" {
		o.Prefix = prefix(t)
	}
	c, err := redis.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Leave the shared Redis as found: drop this test's keys.
		ctx := context.Background()
		iter := c.Universal().Scan(ctx, 0, o.Prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Universal().Del(ctx, iter.Val())
		}
		c.Close()
	})
	return c
}

func TestSequencer(t *testing.T) {
	roletest.Sequencer(t, func(t *testing.T) server.Sequencer { return conformanceClient(t).Sequencer() })
}

func TestRateLimiter(t *testing.T) {
	roletest.RateLimiter(t, func(t *testing.T) server.RateLimiter { return conformanceClient(t).RateLimiter() })
}

func TestInboxIndex(t *testing.T) {
	roletest.InboxIndex(t, func(t *testing.T) server.InboxIndex { return conformanceClient(t).InboxIndex() })
}

func TestProfileCache(t *testing.T) {
	roletest.ProfileCache(t, func(t *testing.T) server.ProfileCache { return conformanceClient(t).ProfileCache() })
}

func TestRegistry(t *testing.T) {
	roletest.Registry(t, func(t *testing.T) server.Registry { return conformanceClient(t).Registry() })
}

func TestVersionedRegistry(t *testing.T) {
	roletest.VersionedRegistry(t, func(t *testing.T) server.VersionedRegistry { return conformanceClient(t).Registry() })
}

func TestBroker(t *testing.T) {
	roletest.Broker(t, func(t *testing.T) server.Broker { return conformanceClient(t).Broker() })
}

func TestRevocations(t *testing.T) {
	roletest.Revocations(t, func(t *testing.T) (server.Revocations, server.Revocations) {
		c := conformanceClient(t)
		return c.Revocations(), c.Revocations()
	})
}

// BenchmarkSendPath is the Redis work of one direct message: rate limit, seq_no,
// registry lookup and inbox touch for both members.
func BenchmarkSendPath(b *testing.B) {
	c := client(b, redis.Options{PoolSize: 64})
	ctx := context.Background()
	seq, rl, ix, reg := c.Sequencer(), c.RateLimiter(), c.InboxIndex(), c.Registry()
	users := []string{"ann", "bob"}
	for _, u := range users {
		if err := ix.Fill(ctx, u, nil); err != nil {
			b.Fatal(err)
		}
		if err := reg.Add(ctx, server.Presence{UserID: u, ConnID: "c1", NodeID: "n1"}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := rl.Allow(ctx, "send:ann", 1<<30); err != nil {
				b.Fatal(err)
			}
			if _, err := seq.Next(ctx, "dm:ann:bob"); err != nil {
				b.Fatal(err)
			}
			if _, err := reg.Nodes(ctx, users); err != nil {
				b.Fatal(err)
			}
			if err := ix.Touch(ctx, users, "dm:ann:bob", time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestSendPath(t *testing.T) {
	roletest.SendPath(t, func(t *testing.T) server.Backends {
		var b server.Backends
		conformanceClient(t).Roles(&b)
		return b
	})
}

func TestInboxCopies(t *testing.T) {
	roletest.InboxCopies(t, func(t *testing.T) server.InboxCopies { return conformanceClient(t).InboxCopies() })
}
