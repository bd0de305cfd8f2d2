package redis_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
)

// Connections cut while Redis is down: their Removes fail, and Redis comes
// back with its data (from the append-only file), so their entries are still
// there. The keeper's next heartbeats take them out; the connection still
// live keeps its entry.
func TestKeeperRetriesFailedRemoves(t *testing.T) {
	retriesFailedRemoves(t, func(ctx context.Context, reg *redis.Registry, p server.Presence) error { return reg.Remove(ctx, p) })
}

// The same for a removal applied from the registry queue (a node's direct
// write while Kafka fails), retried with its version.
func TestKeeperRetriesFailedAppliedRemoves(t *testing.T) {
	retriesFailedRemoves(t, func(ctx context.Context, reg *redis.Registry, p server.Presence) error {
		return reg.Apply(ctx, []server.PresenceChange{{Presence: p, Gone: true, Version: time.Now().UnixMicro()}})
	})
}

func retriesFailedRemoves(t *testing.T, remove func(context.Context, *redis.Registry, server.Presence) error) {
	const every = 50 * time.Millisecond
	r := startOwnRedis(t, "--dir", t.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
	// A short circuit, as in restoresFailedAdd: the default 5 s would outlast
	// the wait below.
	reg := client(t, redis.Options{Addrs: []string{r.addr()}, HeartbeatEvery: every,
		Breaker: redis.BreakerOptions{OpenFor: 100 * time.Millisecond}}).Registry()
	ctx, stop := context.WithCancel(context.Background())

	stays := server.Presence{UserID: "stays", ConnID: "c-stays", NodeID: "n1"}
	var cut []server.Presence
	users := []string{stays.UserID}
	for i := range 200 { // more than one pipeline of retries
		u := fmt.Sprintf("u%d", i)
		cut = append(cut, server.Presence{UserID: u, ConnID: "c-" + u, NodeID: "n1"})
		users = append(users, u)
	}
	var mu sync.Mutex
	live := append([]server.Presence{stays}, cut...)
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
	nodes := func() map[string][]string {
		n, err := reg.Nodes(ctx, users)
		if err != nil {
			return nil
		}
		return n
	}
	testenv.WaitFor(t, 5*time.Second, func() bool { return len(nodes()) == len(users) })
	// The keeper's first beat has set the node's marker: the entries are
	// known to be in place, so nothing but the retries removes any of them.
	raw := goredis.NewClient(&goredis.Options{Addr: r.addr()})
	defer raw.Close()
	testenv.WaitFor(t, 5*time.Second, func() bool {
		keys, err := raw.Keys(ctx, "*registered*").Result()
		return err == nil && len(keys) == 1
	})

	r.stop()
	mu.Lock()
	live = live[:1]
	mu.Unlock()
	for _, p := range cut {
		if err := remove(ctx, reg, p); err == nil {
			t.Fatalf("remove of %+v with Redis down succeeded: the test tests nothing", p)
		}
	}
	r.start()
	back := time.Now()

	var got map[string][]string
	testenv.WaitFor(t, 5*time.Second, func() bool {
		got = nodes()
		return got != nil && len(got) == 1
	})
	t.Logf("the %d entries removed %v after Redis came back (heartbeat every %v)", len(cut), time.Since(back).Round(time.Millisecond), every)
	if want := []string{"n1"}; !slices.Equal(got[stays.UserID], want) {
		t.Fatalf("registry after the retries: %v, want only %s on n1", got, stays.UserID)
	}
	// The reverse set was repaired too: dropping the node leaves nothing.
	if err := reg.DropNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if got := nodes(); len(got) != 0 {
		t.Fatalf("registry after DropNode: %v, want empty", got)
	}
}
