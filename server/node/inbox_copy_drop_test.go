package node_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/wire"
)

// TestRemovalReachesTheInboxCopyAfterARedisOutage: bob's inbox copy lists a
// group; he is removed from it while Redis cannot be reached (a proxy in
// front of the shared test Redis, stopped), so the Drop of it from his copy
// fails. When Redis answers again the node makes the Drop, without bob
// reading his inbox: a DynamoDB outage after that would otherwise show him
// the group from his copy.
func TestRemovalReachesTheInboxCopyAfterARedisOutage(t *testing.T) {
	redisAddr := testenv.RedisAddr(t)
	proxy := testenv.NewProxy(t, redisAddr)
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "copydrop:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() { dropKeys(t, redisAddr, prefix) })
	n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
		Registration: "open", Production: node.Production{RedisAddrs: []string{proxy.Addr()}, RedisPrefix: prefix},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	alice, bob := register(t, n.URL(), "alice"), register(t, n.URL(), "bob")
	st, body := call(t, "POST", n.URL()+"/v1/conversations", alice, wire.CreateConversationRequest{Type: wire.Group, Name: "crew", Members: []string{"bob"}})
	var group wire.Conversation
	if st/100 != 2 || json.Unmarshal(body, &group) != nil {
		t.Fatalf("create group: %d %s", st, body)
	}
	if st, body := call(t, "GET", n.URL()+"/v1/inbox", bob, nil); st != 200 || !strings.Contains(string(body), group.ConversationID) {
		t.Fatalf("bob's inbox: %d %s", st, body)
	}
	rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer rdb.Close()
	copied := func() bool {
		ok, err := rdb.HExists(context.Background(), prefix+"inboxcopy:{bob}", group.ConversationID).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !copied() {
		t.Fatal("bob's copy does not list the group after his inbox read")
	}

	proxy.Stop()
	if st, body := call(t, "DELETE", n.URL()+"/v1/conversations/"+group.ConversationID+"/members/bob", alice, nil); st/100 != 2 {
		t.Fatalf("remove bob with Redis out: %d %s", st, body)
	}
	if !copied() {
		t.Fatal("the group left bob's copy with Redis out: the test did not make the Drop fail")
	}
	proxy.Start()
	testenv.WaitFor(t, 30*time.Second, func() bool { return !copied() })
}
