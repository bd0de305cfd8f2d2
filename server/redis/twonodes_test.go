package redis_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// cluster is two nodes on the same tables and Redis, alice registered on the
// first and bob on the second.
type cluster struct {
	a, b       *servertest.Server
	alice, bob *api
	conv       string
	prod       node.Production
	rc         *redis.Client
}

func twoNodes(t *testing.T) *cluster {
	t.Helper()
	return twoNodesOn(t, addr(t))
}

// twoNodesOn is twoNodes on the Redis at redisAddr (one the test can stop);
// opts change each node's configuration (its NodeID is set).
func twoNodesOn(t *testing.T, redisAddr string, opts ...func(*node.Config)) *cluster {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("CHAT_DYNAMO_SERIAL_WRITES", "1")
	id := prefix(t)[5:13]
	prod := node.Production{DynamoEndpoint: endpoint, DynamoRegion: "t" + id, TablePrefix: "two-" + id + "-",
		CreateTables: true, RedisAddrs: []string{redisAddr}, RedisPrefix: "two:" + id + ":"}
	t.Cleanup(func() {
		ctx := context.Background()
		if st, err := dynamo.Open(ctx, dynamo.Options{Region: prod.DynamoRegion, Endpoint: endpoint, TablePrefix: prod.TablePrefix}); err == nil {
			_ = st.DeleteTables(ctx)
		}
	})
	start := func(nodeID string) *servertest.Server {
		return servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
			c.Production, c.NodeID = prod, nodeID
			for _, o := range opts {
				o(c)
			}
		}))
	}
	a, b := start("node-a"), start("node-b")
	alice, bob := &api{t: t, base: a.URL}, &api{t: t, base: b.URL}
	for _, u := range []struct {
		a  *api
		id string
	}{{alice, "alice"}, {bob, "bob"}} {
		var auth wire.AuthResponse
		if st := u.a.do("POST", "/v1/register", wire.RegisterRequest{UserID: u.id, Password: "password-" + u.id}, &auth); st/100 != 2 {
			t.Fatalf("register %s: %d", u.id, st)
		}
		u.a.token = auth.Token
	}
	conv := wire.DirectConversationID("alice", "bob")
	if st := alice.do("POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}, nil); st/100 != 2 {
		t.Fatalf("create conversation: %d", st)
	}
	rc := client(t, redis.Options{Addrs: []string{redisAddr}, Prefix: prod.RedisPrefix})
	return &cluster{a: a, b: b, alice: alice, bob: bob, conv: conv, prod: prod, rc: rc}
}

// bobOnB connects bob's socket to node-b and waits until the registry has it;
// frames come on the channel, which is closed (after readErr is set) when the
// socket ends.
func (c *cluster) bobOnB(ctx context.Context, t *testing.T) (ws *websocket.Conn, frames chan wire.Frame, readErr *error) {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, strings.Replace(c.b.URL, "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.bob.token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	frames = make(chan wire.Frame, 16)
	readErr = new(error)
	go func() {
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				*readErr = err
				close(frames)
				return
			}
			for line := range wire.Frames(data) { // one frame or several, one per line
				if f, err := wire.DecodeFrame(line); err == nil {
					frames <- f
				}
			}
		}
	}()
	// A sync is served by the connection's worker after its connect-time
	// catch-up: once it is answered, what bob gets later came by another path.
	sync, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeSync, ID: "s1", Cursors: []wire.Cursor{{ConversationID: c.conv}}})
	if err := ws.Write(ctx, websocket.MessageText, sync); err != nil {
		t.Fatal(err)
	}
	for f := range frames {
		if f.Type == wire.TypeSynced || f.Type == wire.TypeError {
			break
		}
	}
	// The entry is added at connect, or soon after if Redis did not answer in
	// time (a loaded test machine): wait for it rather than expect it at once.
	testenv.WaitFor(t, 10*time.Second, func() bool {
		where, err := c.rc.Registry().Nodes(ctx, []string{"alice", "bob"})
		if err != nil || len(where) != 1 || len(where["bob"]) != 1 || where["bob"][0] != "node-b" {
			t.Logf("registry = %v, %v; want bob on node-b only", where, err)
			return false
		}
		return true
	})
	return ws, frames, readErr
}

// TestTwoNodes runs two nodes on the same tables and Redis: a message sent to one
// node reaches a WebSocket on the other through the registry and pub/sub, and a
// node shutting down takes its connections out of the registry.
func TestTwoNodes(t *testing.T) {
	c := twoNodes(t)
	b, alice, conv, rc := c.b, c.alice, c.conv, c.rc
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, frames, readErr := c.bobOnB(ctx, t)
	var sent wire.SendResponse
	if st := alice.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "x1", Content: "across nodes"}, &sent); st != http.StatusCreated {
		t.Fatalf("send: %d", st)
	}
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("socket closed before the message arrived: %v", *readErr)
			}
			if f.Type == wire.TypeMessage && f.Message != nil && f.Message.Content == "across nodes" && f.Message.SeqNo == sent.SeqNo {
				// A node shutting down removes its connections from the registry.
				b.Close()
				if where, err := rc.Registry().Nodes(ctx, []string{"bob"}); err != nil || len(where) != 0 {
					t.Fatalf("registry after node-b stopped = %v, %v; want empty", where, err)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the message sent on node-a did not reach bob's socket on node-b")
		}
	}
}
