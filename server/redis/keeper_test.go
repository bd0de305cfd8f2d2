package redis_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
)

func TestKeeperReapsDeadNodes(t *testing.T) {
	const every = 50 * time.Millisecond
	c := client(t, redis.Options{HeartbeatEvery: every})
	reg := c.Registry()
	ctx := context.Background()
	for _, p := range []server.Presence{{UserID: "alice", ConnID: "c1", NodeID: "crashed"}, {UserID: "bob", ConnID: "c2", NodeID: "alive"}} {
		if err := reg.Add(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// "crashed" heartbeats for a moment, then stops, as a killed process would.
	crashedCtx, crash := context.WithCancel(ctx)
	go reg.Keep(crashedCtx, "crashed", nil)
	time.Sleep(2 * every)
	crash()
	aliveCtx, stop := context.WithCancel(ctx)
	defer stop()
	go reg.Keep(aliveCtx, "alive", nil)

	deadline := time.Now().Add(5 * time.Second)
	for {
		nodes, err := reg.Nodes(ctx, []string{"alice", "bob"})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes["alice"]) == 0 {
			if len(nodes["bob"]) != 1 || nodes["bob"][0] != "alive" {
				t.Fatalf("the live node's connection was dropped too: %v", nodes)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the crashed node's connection was never reaped: %v", nodes)
		}
		time.Sleep(every)
	}
}

// When Redis loses a node's entries (a flush, a failover to an empty replica),
// the node's keeper adds its live connections again, and only those.
func TestKeeperRestoresLostEntries(t *testing.T) {
	const every = 50 * time.Millisecond
	pfx := prefix(t)
	reg := client(t, redis.Options{HeartbeatEvery: every, Prefix: pfx}).Registry()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var mu sync.Mutex
	live := []server.Presence{{UserID: "alice", ConnID: "c1", NodeID: "n1"}, {UserID: "bob", ConnID: "c2", NodeID: "n1"}}
	for _, p := range live {
		if err := reg.Add(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		reg.Keep(ctx, "n1", func() []server.Presence {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(live)
		})
	}()
	defer func() { stop(); <-done }()
	time.Sleep(3 * every) // the keeper has seen the entries in place

	// Redis loses this test's keys, and alice's connection ends meanwhile.
	raw := goredis.NewClient(&goredis.Options{Addr: addr(t)})
	defer raw.Close()
	keys, err := raw.Keys(ctx, pfx+"*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys under %q: %v, %v", pfx, keys, err)
	}
	if err := raw.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	live = live[1:]
	mu.Unlock()

	var nodes map[string][]string
	testenv.WaitFor(t, 5*time.Second, func() bool {
		nodes, err = reg.Nodes(ctx, []string{"alice", "bob"})
		return err == nil && len(nodes["bob"]) == 1
	})
	if nodes["bob"][0] != "n1" || len(nodes["alice"]) != 0 {
		t.Fatalf("registry after the restore: %v, want bob on n1 only", nodes)
	}
}

// An Add that fails while Redis keeps its data (here: Redis down, then back
// with its data from the append-only file) leaves the node's marker in place;
// the keeper still puts the entry back with its next heartbeat.
func TestKeeperRestoresEntryWhoseAddFailed(t *testing.T) {
	restoresFailedAdd(t, func(ctx context.Context, reg *redis.Registry, p server.Presence) error { return reg.Add(ctx, p) })
}

// The same for an Add applied from the registry queue (Apply: a worker's, or
// a node's direct write while Kafka fails).
func TestKeeperRestoresEntryWhoseApplyFailed(t *testing.T) {
	restoresFailedAdd(t, func(ctx context.Context, reg *redis.Registry, p server.Presence) error {
		return reg.Apply(ctx, []server.PresenceChange{{Presence: p, Version: time.Now().UnixMicro()}})
	})
}

func restoresFailedAdd(t *testing.T, add func(context.Context, *redis.Registry, server.Presence) error) {
	const every = 50 * time.Millisecond
	r := startOwnRedis(t, "--dir", t.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
	// Heartbeats 50 ms apart fail while redis-server restarts: on a loaded
	// machine enough of them in a row to open the circuit, whose default 5 s
	// would outlast the wait below.
	reg := client(t, redis.Options{Addrs: []string{r.addr()}, HeartbeatEvery: every,
		Breaker: redis.BreakerOptions{OpenFor: 100 * time.Millisecond}}).Registry()
	ctx, stop := context.WithCancel(context.Background())
	p := server.Presence{UserID: "alice", ConnID: "c1", NodeID: "n1"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		reg.Keep(ctx, "n1", func() []server.Presence { return []server.Presence{p} })
	}()
	defer func() { stop(); <-done }()
	online := func() bool {
		nodes, err := reg.Nodes(ctx, []string{"alice"})
		return err == nil && len(nodes["alice"]) == 1
	}
	// The first heartbeat sets the marker and puts alice in (she is live).
	testenv.WaitFor(t, 5*time.Second, online)
	if err := reg.Remove(ctx, p); err != nil {
		t.Fatal(err)
	}
	r.stop()
	if err := add(ctx, reg, p); err == nil {
		t.Fatal("Add with Redis down succeeded: the test tests nothing")
	}
	r.start()
	testenv.WaitFor(t, 5*time.Second, online)
}
