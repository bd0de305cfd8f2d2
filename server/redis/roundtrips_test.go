package redis_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// TestSendRoundTrips counts the Redis round trips of sends through the Service
// on the Redis roles (issue 19: at most two per send), with a send rate limit
// as in production: a direct message whose receiver is online on another node,
// and a group message whose members are on two other nodes. What reaches those
// nodes is checked too: fewer round trips must not mean fewer deliveries.
func TestSendRoundTrips(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var rt redis.RoundTrips
	// No heartbeat while counting: the keeper's would be counted with the sends.
	o := redis.Options{CallTimeout: 5 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		DialTimeout: 2 * time.Second, HeartbeatEvery: time.Hour}
	rc := client(t, o)
	rc.Universal().AddHook(&rt)
	o.Prefix = rc.Prefix()
	other := client(t, o) // the other nodes, not counted

	store, err := sqlite.Open(filepath.Join(t.TempDir(), "chat.db"), sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b := server.Backends{Store: store}
	rc.Roles(&b)
	svc, err := server.New(server.Config{Backends: b, NodeID: "node-a", SendRate: 50, RedeliverAfter: time.Hour,
		PasswordCost: 4, Registration: server.RegistrationOpen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	for _, u := range []string{"alice", "bob", "carol"} {
		if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: u, Password: "password-" + u}, ""); err != nil {
			t.Fatal(err)
		}
	}

	// bob is on node-b and carol on node-c; every inbox is warm, so the touches
	// do their full work.
	var mu sync.Mutex
	got := map[string]map[string]bool{} // node → "user seq conversation" received
	for _, p := range []server.Presence{{UserID: "bob", ConnID: "b1", NodeID: "node-b"}, {UserID: "carol", ConnID: "c1", NodeID: "node-c"}} {
		if err := other.Registry().Add(ctx, p); err != nil {
			t.Fatal(err)
		}
		node := p.NodeID
		got[node] = map[string]bool{}
		err := other.Broker().Subscribe(ctx, node, func(env server.Envelope) {
			f, err := wire.DecodeFrame(env.Frame)
			if err != nil || f.Message == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, u := range env.UserIDs {
				got[node][fmt.Sprint(u, f.Message.SeqNo, f.Message.ConversationID)] = true
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"alice", "bob", "carol"} {
		if err := other.InboxIndex().Fill(ctx, u, nil); err != nil {
			t.Fatal(err)
		}
	}
	group, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Group, Name: "crew", Members: []string{"bob", "carol"}})
	if err != nil {
		t.Fatal(err)
	}
	direct := wire.DirectConversationID("alice", "bob")
	// The first message creates the direct conversation; both conversations
	// are then as every later send finds them.
	for _, conv := range []string{direct, group.ConversationID} {
		if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "warm-" + conv, Content: "hi"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Whatever the Service started (the keeper's first heartbeat) is done when
	// the count stops moving.
	for last := int64(-1); last != rt.Load(); {
		last = rt.Load()
		time.Sleep(300 * time.Millisecond)
	}

	const sends = 5
	for _, c := range []struct {
		name, conv string
		want       map[string][]string // node → users there who must get each message
	}{
		{"direct", direct, map[string][]string{"node-b": {"bob"}}},
		{"group", group.ConversationID, map[string][]string{"node-b": {"bob"}, "node-c": {"carol"}}},
	} {
		var trips []int64
		for i := range sends {
			before := rt.Load()
			resp, _, err := svc.Send(ctx, "alice", c.conv, wire.SendRequest{MessageID: fmt.Sprint(c.name, i), Content: "counted"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			trips = append(trips, rt.Load()-before)
			for node, users := range c.want {
				for _, u := range users {
					key := fmt.Sprint(u, resp.SeqNo, c.conv)
					testenv.WaitFor(t, 5*time.Second, func() bool {
						mu.Lock()
						defer mu.Unlock()
						return got[node][key]
					})
				}
			}
		}
		t.Logf("%s message, receivers online on other nodes: Redis round trips per send %v", c.name, trips)
		for i, n := range trips {
			if n > 2 {
				t.Errorf("%s send %d took %d Redis round trips; want at most 2", c.name, i, n)
			}
		}
	}
}
