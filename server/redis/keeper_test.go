package redis_test

import (
	"context"
	"testing"
	"time"

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
	go reg.Keep(crashedCtx, "crashed")
	time.Sleep(2 * every)
	crash()
	aliveCtx, stop := context.WithCancel(ctx)
	defer stop()
	go reg.Keep(aliveCtx, "alive")

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
