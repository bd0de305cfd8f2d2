package client_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// TestOfflineInboxKeepsTheCache: with the server's DynamoDB out (a proxy in
// front of the test server, stopped), a device that connects is given the
// inbox as the server's offline copy of alice's last inbox read. It takes the
// conversation its cache lacks from it, forgets none the copy does not list
// (a group alice joined after that read, which a complete answer's rule would
// take out of her inbox), and says the inbox it shows is offline.
func TestOfflineInboxKeepsTheCache(t *testing.T) {
	redisAddr := testenv.RedisAddr(t)
	proxy := testenv.NewProxy(t, testenv.DynamoEndpoint(t))
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	prod := node.Production{DynamoEndpoint: proxy.URL(), DynamoRegion: "t" + id[:8], TablePrefix: "offline-" + id + "-",
		CreateTables: true, RedisAddrs: []string{redisAddr}, RedisPrefix: "offline:" + id + ":"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if st, err := dynamo.Open(ctx, dynamo.Options{Region: prod.DynamoRegion, Endpoint: testenv.DynamoEndpoint(t), TablePrefix: prod.TablePrefix}); err == nil {
			_ = st.DeleteTables(ctx)
		}
		rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr})
		defer rdb.Close()
		for it := rdb.Scan(ctx, 0, prod.RedisPrefix+"*", 1000).Iterator(); it.Next(ctx); {
			rdb.Del(ctx, it.Val())
		}
	})
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.Production = prod }))
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	dm := direct(t, aliceAPI, "bob")
	before, err := bobAPI.CreateConversation(bg, wire.CreateConversationRequest{Type: wire.Group, Name: "before", Members: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bobAPI.SendNow(bg, before.ConversationID, wire.SendRequest{MessageID: wire.NewMessageID(), Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	// Alice's last inbox read: what the server keeps as her copy.
	if in, err := aliceAPI.Inbox(bg, 500); err != nil || len(in.Conversations) != 2 || in.Stale {
		t.Fatalf("alice's inbox: %+v, %v", in, err)
	}
	later, err := bobAPI.CreateConversation(bg, wire.CreateConversationRequest{Type: wire.Group, Name: "later", Members: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := bobAPI.SendNow(bg, later.ConversationID, wire.SendRequest{MessageID: wire.NewMessageID(), Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// The device's cache lists the direct conversation and the later group
	// (it saw them), not the group from before.
	d := newDevice(t, aliceAPI, srv.URL, "alice")
	if err := d.store.PutInbox(bg, wire.InboxEntry{ConversationID: dm, Type: wire.Direct, Peer: "bob"},
		wire.InboxEntry{ConversationID: later.ConversationID, Type: wire.Group, Name: "later", LastSeq: sent.SeqNo, LastMessageSender: "bob", LastMessageAt: sent.Timestamp}); err != nil {
		t.Fatal(err)
	}

	proxy.Stop()
	d.run()
	var got client.InboxEvent
	d.waitFor("the inbox read", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, ev := range d.events {
			if ie, ok := ev.(client.InboxEvent); ok {
				got = ie
				return true
			}
		}
		return false
	})
	for _, c := range []string{dm, before.ConversationID, later.ConversationID} {
		if !d.inboxHas(c) {
			t.Errorf("the cached inbox does not list %s after the offline copy", c)
		}
	}
	if !got.Offline {
		t.Error("the inbox event does not say the inbox is offline")
	}
}
