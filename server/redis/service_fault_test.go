package redis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// api is a minimal HTTP client of the chat API for this test.
type api struct {
	t     *testing.T
	base  string
	token string
}

func (a *api) do(method, path string, body, out any) int {
	a.t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			a.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, a.base+path, &buf)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			a.t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// prodNode is a node started by productionNode.
type prodNode struct {
	alice, bob  *api
	conv        string // alice and bob's direct conversation
	redisPrefix string
}

// productionNode starts a node on DynamoDB (moto, tables of its own) and the
// given Redis, with alice and bob registered and their direct conversation created.
func productionNode(t *testing.T, redisAddr string) prodNode {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("CHAT_DYNAMO_SERIAL_WRITES", "1")
	id := prefix(t)[5:13]
	t.Cleanup(func() { // after the server stops (cleanups run last-in first-out)
		ctx := context.Background()
		if st, err := dynamo.Open(ctx, dynamo.Options{Region: "t" + id, Endpoint: endpoint, TablePrefix: "fault-" + id + "-"}); err == nil {
			_ = st.DeleteTables(ctx)
		}
	})
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.Production = node.Production{DynamoEndpoint: endpoint, DynamoRegion: "t" + id, TablePrefix: "fault-" + id + "-",
			CreateTables: true, RedisAddrs: []string{redisAddr}, RedisPrefix: "fault:" + id + ":"}
	}))
	n := prodNode{alice: &api{t: t, base: srv.URL}, bob: &api{t: t, base: srv.URL}, conv: wire.DirectConversationID("alice", "bob"), redisPrefix: "fault:" + id + ":"}
	for _, u := range []struct {
		a  *api
		id string
	}{{n.alice, "alice"}, {n.bob, "bob"}} {
		var auth wire.AuthResponse
		if st := u.a.do("POST", "/v1/register", wire.RegisterRequest{UserID: u.id, Password: "password-" + u.id}, &auth); st/100 != 2 {
			t.Fatalf("register %s: %d", u.id, st)
		}
		u.a.token = auth.Token
	}
	if st := n.alice.do("POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}, nil); st/100 != 2 {
		t.Fatalf("create conversation: %d", st)
	}
	return n
}

// TestSendsSurviveRedisOutage runs a real node on DynamoDB (moto) and a Redis of
// this test's own, stops Redis in the middle and brings it back empty: every send
// succeeds, and seq_no stays contiguous through the fallback counter and the
// re-seed after Redis returns without its counters.
func TestSendsSurviveRedisOutage(t *testing.T) {
	r := startOwnRedis(t)
	n := productionNode(t, r.addr())
	alice, bob, conv := n.alice, n.bob, n.conv
	var want int64
	send := func(phase string) time.Duration {
		t.Helper()
		want++
		var resp wire.SendResponse
		start := time.Now()
		st := alice.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: fmt.Sprint("m", want), Content: phase}, &resp)
		d := time.Since(start)
		if st != http.StatusCreated || resp.SeqNo != want {
			t.Fatalf("%s: send %d: status %d seq %d", phase, want, st, resp.SeqNo)
		}
		return d
	}
	for range 3 {
		send("redis up")
	}
	r.stop()
	var slowest time.Duration
	for range 5 {
		slowest = max(slowest, send("redis down"))
	}
	t.Logf("slowest send with Redis down: %v", slowest)
	r.start() // empty: the counter restarts at 0 and is re-seeded from the table
	for range 3 {
		send("redis back")
	}
	var h wire.HistoryResponse
	if st := bob.do("GET", "/v1/conversations/"+conv+"/messages?limit=100", nil, &h); st != http.StatusOK {
		t.Fatalf("history: %d", st)
	}
	if len(h.Messages) != int(want) {
		t.Fatalf("history has %d messages, want %d", len(h.Messages), want)
	}
	for i, m := range h.Messages {
		if m.SeqNo != want-int64(i) {
			t.Fatalf("history out of order or with a gap at %d: seq %d", i, m.SeqNo)
		}
	}
}

// TestNodeStartsWithRedisDown: a node whose Redis is unreachable at start starts
// anyway and stores messages on its fallbacks.
func TestNodeStartsWithRedisDown(t *testing.T) {
	r := startOwnRedis(t)
	r.stop()
	n := productionNode(t, r.addr())
	alice, conv := n.alice, n.conv
	for i := int64(1); i <= 3; i++ {
		var resp wire.SendResponse
		if st := alice.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: fmt.Sprint("m", i), Content: "hi"}, &resp); st != http.StatusCreated || resp.SeqNo != i {
			t.Fatalf("send %d with Redis down: status %d seq %d", i, st, resp.SeqNo)
		}
	}
}

// connectBob opens bob's WebSocket on the node and reads its hello frame (which
// comes after the connection's registry entry was tried).
func connectBob(t *testing.T, ctx context.Context, n prodNode) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, strings.Replace(n.bob.base, "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + n.bob.token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	if _, data, err := ws.Read(ctx); err != nil || !strings.Contains(string(data), `"hello"`) {
		t.Fatalf("first frame %q, %v; want hello", data, err)
	}
	return ws
}

// bobOnline says whether the registry in r, as the node n sees it, has bob
// connected (what other nodes would ask).
func bobOnline(t *testing.T, ctx context.Context, r *ownRedis, n prodNode) func() bool {
	rc := client(t, redis.Options{Addrs: []string{r.addr()}, Prefix: n.redisPrefix, CallTimeout: 5 * time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, DialTimeout: 2 * time.Second})
	return func() bool {
		where, err := rc.Registry().Nodes(ctx, []string{"bob"})
		return err == nil && len(where["bob"]) == 1
	}
}

// TestPresenceAddedWhenRedisReturns: a connection made while Redis is down gets
// its registry entry once Redis is back, without reconnecting, so other nodes
// see the user online again; and the entry goes when the connection does.
func TestPresenceAddedWhenRedisReturns(t *testing.T) {
	r := startOwnRedis(t)
	n := productionNode(t, r.addr())
	r.stop()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ws := connectBob(t, ctx, n)
	r.start()
	online := bobOnline(t, ctx, r, n)
	testenv.WaitFor(t, 20*time.Second, online)
	ws.Close(websocket.StatusNormalClosure, "")
	testenv.WaitFor(t, 10*time.Second, func() bool { return !online() })
}

// TestPresenceRestoredWhenRedisComesBackEmpty: Redis restarts without its data
// (as a failover to an empty replica would) while bob stays connected; the
// node's keeper puts his entry back, so other nodes see him online again
// without his reconnecting.
func TestPresenceRestoredWhenRedisComesBackEmpty(t *testing.T) {
	r := startOwnRedis(t)
	n := productionNode(t, r.addr())
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	connectBob(t, ctx, n)
	online := bobOnline(t, ctx, r, n)
	testenv.WaitFor(t, 10*time.Second, online)
	r.stop()
	r.start() // empty
	if online() {
		t.Fatal("the restarted Redis still holds bob's entry: the test tests nothing")
	}
	// The keeper heartbeats every 5 s.
	testenv.WaitFor(t, 20*time.Second, online)
}
