package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/wire"
)

// startRedisNode starts a node on the embedded store with Redis roles at p
// (a key prefix of its own is added), serving /metrics with the token "m".
func startRedisNode(t *testing.T, p node.Production, log *slog.Logger) *node.Node {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	p.RedisPrefix = "nodetest:" + hex.EncodeToString(b[:]) + ":"
	n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
		Registration: "open", MetricsToken: "m", Production: p, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Close()
		dropKeys(t, p.RedisAddrs[0], p.RedisPrefix)
	})
	return n
}

// dropKeys leaves the shared Redis (or Cluster: every master) as found.
func dropKeys(t *testing.T, addr, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	del := func(ctx context.Context, c *goredis.Client) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	one := goredis.NewClient(&goredis.Options{Addr: addr})
	defer one.Close()
	if info, err := one.Info(ctx, "cluster").Result(); err == nil && strings.Contains(info, "cluster_enabled:1") {
		cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{addr}})
		defer cc.Close()
		if err := cc.ForEachMaster(ctx, del); err != nil {
			t.Logf("dropping test keys: %v", err)
		}
		return
	}
	if err := del(ctx, one); err != nil {
		t.Logf("dropping test keys: %v", err)
	}
}

// fallbacks reads chat_fallbacks_total from the node's /metrics, by role.
func fallbacks(t *testing.T, n *node.Node) map[string]string {
	t.Helper()
	req, _ := http.NewRequest("GET", n.URL()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer m")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	got := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "chat_fallbacks_total{") {
			name, value, _ := strings.Cut(line, " ")
			got[name] = value
		}
	}
	return got
}

// send posts one message from token's user to conv over HTTP.
func send(t *testing.T, n *node.Node, token, conv, id string) {
	t.Helper()
	body, _ := json.Marshal(wire.SendRequest{MessageID: id, Content: "hello " + id})
	req, _ := http.NewRequest("POST", n.URL()+"/v1/conversations/"+conv+"/messages", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("send %s: %d %s", id, resp.StatusCode, b)
	}
}

// A Redis Cluster given as one address, its configuration endpoint, as
// docs/production.md tells operators to: the node asks Redis what it is and
// uses it as a Cluster. Taken for a single server, every keyed command on
// another shard's slot was answered MOVED and each role took its fallback in
// silence; so the sends here, over conversations spread across the slots,
// must take no fallback at all.
func TestRedisClusterGivenAsOneAddress(t *testing.T) {
	addr := testenv.RedisClusterAddr(t)
	// A long call timeout: on a loaded machine (the race run) 150 ms can pass
	// on a healthy Redis, and its fallback would be counted here.
	n := startRedisNode(t, node.Production{RedisAddrs: []string{addr}, RedisTimeout: 5 * time.Second}, nil)
	tokens := map[string]string{}
	users := []string{"ann", "bob", "cid", "dee", "eve", "fay"}
	for _, u := range users {
		tokens[u] = register(t, n.URL(), u)
	}
	for i, u := range users {
		for _, v := range users[i+1:] {
			send(t, n, tokens[u], wire.DirectConversationID(u, v), u+"-"+v)
		}
	}
	if got := fallbacks(t, n); len(got) > 0 {
		t.Fatalf("fallbacks taken on a healthy Redis Cluster given as one address: %v", got)
	}
}

// A configuration Redis refuses is said at start, and the node does not start:
// started, it would have run with every Redis role on its fallback. Redis not
// answering at all is an outage, which the fallbacks are for: the node starts,
// and says so.
func TestStartRedisConfiguration(t *testing.T) {
	single := testenv.RedisAddr(t) // no TLS (passwords: server/redis's TestOpen)
	start := func(p node.Production) error {
		n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4, Production: p})
		if err == nil {
			n.Close()
		}
		return err
	}
	t.Run("ErrTLS", func(t *testing.T) {
		err := start(node.Production{RedisAddrs: []string{single}, RedisTLS: true})
		if err == nil || !strings.Contains(err.Error(), "drop --redis-tls") {
			t.Fatalf("Start with TLS to a plain Redis: %v", err)
		}
	})
	t.Run("ErrModeCluster", func(t *testing.T) {
		err := start(node.Production{RedisAddrs: []string{single}, RedisMode: "cluster"})
		if err == nil || !strings.Contains(err.Error(), "is not a Redis Cluster node") {
			t.Fatalf("Start in cluster mode on a single server: %v", err)
		}
	})
	t.Run("ErrReplicaReadsWithoutReplicas", func(t *testing.T) {
		err := start(node.Production{RedisAddrs: []string{single}, RedisReplicaReads: true})
		if err == nil || !strings.Contains(err.Error(), "--redis-replica-addrs") {
			t.Fatalf("Start with replica reads on a single server and no replica: %v", err)
		}
	})
	t.Run("ErrModeSingleOnCluster", func(t *testing.T) {
		addr := testenv.RedisClusterAddr(t)
		err := start(node.Production{RedisAddrs: []string{addr}, RedisMode: "single"})
		if err == nil || !strings.Contains(err.Error(), "is a Redis Cluster node") {
			t.Fatalf("Start in single mode on a Cluster node: %v", err)
		}
	})
	t.Run("DownStartsDegraded", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := l.Addr().String()
		l.Close() // nothing listens there now
		var logs testenv.LogBuffer
		n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
			Production: node.Production{RedisAddrs: []string{down}}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("Start with Redis down: %v", err)
		}
		n.Close()
		if !strings.Contains(logs.String(), "level=WARN msg=\"redis is not answering; starting with its fallbacks") ||
			!strings.Contains(logs.String(), "set --redis-mode") {
			t.Fatalf("no warning that Redis is down and its topology was guessed:\n%s", logs.String())
		}
	})
}

// Fallbacks that last are said at WARN, once, with their counts, and their end
// at INFO: one by one they are DEBUG lines, and a Redis that answers every
// call with something the roles cannot use (MOVED) left the breaker closed, so
// nothing above DEBUG said that every send took them.
func TestLastingFallbacksAreLogged(t *testing.T) {
	testenv.RedisAddr(t) // the same switch as the other integration tests
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	var logs testenv.LogBuffer
	n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
		Registration: "open", FallbackWarnAfter: 600 * time.Millisecond,
		Production: node.Production{RedisAddrs: []string{down}, RedisMode: "single"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ann, _ := register(t, n.URL(), "ann"), register(t, n.URL(), "bob")
	conv := wire.DirectConversationID("ann", "bob")
	for i := 0; !strings.Contains(logs.String(), "fallbacks taken for a while"); i++ {
		if i > 200 {
			t.Fatalf("no WARN after 2 s of sends on fallbacks:\n%s", logs.String())
		}
		send(t, n, ann, conv, strconv.Itoa(i))
		time.Sleep(10 * time.Millisecond)
	}
	testenv.WaitFor(t, 3*time.Second, func() bool { return strings.Contains(logs.String(), "fallbacks no longer taken") })
	out := logs.String()
	if c := strings.Count(out, "fallbacks taken for a while"); c != 1 {
		t.Fatalf("%d WARN lines, want 1:\n%s", c, out)
	}
	if !strings.Contains(out, `level=WARN msg="fallbacks taken for a while`) || !strings.Contains(out, "fallbacks=\"map[") || !strings.Contains(out, "sequencer:") {
		t.Fatalf("the WARN line does not have the counts by role:\n%s", out)
	}
}
