package redis_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/internal/testcert"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
)

// open is Open with the conformance timeouts and a key prefix of this test's
// own, whose keys are dropped at the end (on every master of a Cluster).
func open(t *testing.T, o redis.Options) *redis.Client {
	t.Helper()
	o.Prefix = prefix(t)
	o.CallTimeout, o.ReadTimeout, o.WriteTimeout, o.DialTimeout = 5*time.Second, 2*time.Second, 2*time.Second, 2*time.Second
	c, err := redis.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		del := func(ctx context.Context, u goredis.UniversalClient) error {
			iter := u.Scan(ctx, 0, o.Prefix+"*", 1000).Iterator()
			for iter.Next(ctx) {
				u.Del(ctx, iter.Val())
			}
			return iter.Err()
		}
		if cc, ok := c.Universal().(*goredis.ClusterClient); ok {
			_ = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return del(ctx, m) })
		} else {
			_ = del(ctx, c.Universal())
		}
		c.Close()
	})
	return c
}

func TestOpen(t *testing.T) {
	t.Run("OKSingle", func(t *testing.T) {
		if c := open(t, redis.Options{Addrs: []string{addr(t)}}); c.Mode() != redis.ModeSingle {
			t.Fatalf("a single server opened as %s", c.Mode())
		}
	})
	// The configuration endpoint of a Cluster is one address: asked, it says
	// cluster_enabled:1, and the client is a Cluster client, on which keys of
	// every slot work (a single-server client is answered MOVED on two thirds).
	t.Run("OKClusterFromOneAddress", func(t *testing.T) {
		c := open(t, redis.Options{Addrs: []string{testenv.RedisClusterAddr(t)}})
		if c.Mode() != redis.ModeCluster {
			t.Fatalf("a Cluster node opened as %s", c.Mode())
		}
		seq := c.Sequencer()
		for i := range 30 {
			if _, err := seq.Next(t.Context(), fmt.Sprint("conv-", i)); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("ErrPassword", func(t *testing.T) {
		r := startOwnRedis(t, "--requirepass", "right")
		for _, pw := range []string{"", "wrong"} {
			_, err := redis.Open(t.Context(), redis.Options{Addrs: []string{r.addr()}, Password: pw})
			if !errors.Is(err, redis.ErrConfig) || !strings.Contains(err.Error(), "CHATSERVER_REDIS_PASSWORD") {
				t.Fatalf("Open with password %q on a Redis that wants another: %v", pw, err)
			}
		}
		open(t, redis.Options{Addrs: []string{r.addr()}, Password: "right"})
	})
	t.Run("ErrModeSingleOnCluster", func(t *testing.T) {
		_, err := redis.Open(t.Context(), redis.Options{Addrs: []string{testenv.RedisClusterAddr(t)}, Mode: redis.ModeSingle})
		if !errors.Is(err, redis.ErrConfig) {
			t.Fatalf("Open in single mode on a Cluster node: %v", err)
		}
	})
	t.Run("ErrSeveralAddressesNotACluster", func(t *testing.T) {
		r := startOwnRedis(t)
		_, err := redis.Open(t.Context(), redis.Options{Addrs: []string{addr(t), r.addr()}})
		if !errors.Is(err, redis.ErrConfig) {
			t.Fatalf("Open on two single servers: %v", err)
		}
	})
}

// Whatever was built, a MOVED answer reaching the roles says loudly what is
// wrong (an ERROR, once) and counts as Redis failing, so the breaker opens and
// says so too: a Cluster taken for a single server is not a silent trap even
// when its topology could not be asked at start.
func TestMovedIsLoud(t *testing.T) {
	var logs testenv.LogBuffer
	c := client(t, redis.Options{Addrs: []string{testenv.RedisClusterAddr(t)}, Mode: redis.ModeSingle,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), CallTimeout: 5 * time.Second, ReadTimeout: 2 * time.Second})
	seq := c.Sequencer()
	var moved int
	for i := range 60 {
		_, err := seq.Next(t.Context(), fmt.Sprint("conv-", i))
		if errors.Is(err, redis.ErrUnavailable) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no call failed: are the keys all on the seed's shard?")
	}
	if n := strings.Count(logs.String(), `level=ERROR msg="redis answers MOVED`); n != 1 {
		t.Fatalf("%d ERROR lines about MOVED, want 1:\n%s", n, logs.String())
	}
	if st := c.BreakerState(); st != gobreaker.StateOpen {
		t.Fatalf("the breaker is %v after MOVED answers, want open:\n%s", st, logs.String())
	}
	if !strings.Contains(logs.String(), `level=WARN msg="redis is failing`) {
		t.Fatalf("no WARN line from the breaker on MOVED answers:\n%s", logs.String())
	}
}

// clusterNodes lists a Cluster's masters and replicas, from CLUSTER NODES.
func clusterNodes(t *testing.T, seed string) (masters, replicas []string) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: seed})
	defer c.Close()
	out, err := c.ClusterNodes(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.Contains(f[2], "fail") {
			continue
		}
		a, _, _ := strings.Cut(f[1], "@")
		switch {
		case strings.Contains(f[2], "master"):
			masters = append(masters, a)
		case strings.Contains(f[2], "slave"):
			replicas = append(replicas, a)
		}
	}
	return masters, replicas
}

// commandCalls sums INFO commandstats over nodes: calls per command, and
// "rejected" for the calls refused (a write sent to a replica would be).
func commandCalls(t *testing.T, nodes []string) map[string]int {
	t.Helper()
	sum := map[string]int{}
	for _, a := range nodes {
		c := goredis.NewClient(&goredis.Options{Addr: a})
		info, err := c.Info(t.Context(), "commandstats").Result()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			for _, kv := range strings.Split(stats, ",") {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.Atoi(v)
				switch k {
				case "calls":
					sum[strings.TrimPrefix(name, "cmdstat_")] += n
				case "rejected_calls":
					sum["rejected"] += n
				}
			}
		}
	}
	return sum
}

func delta(before, after map[string]int, cmds ...string) (n int) {
	for _, c := range cmds {
		n += after[c] - before[c]
	}
	return n
}

// waitReplicated waits until every replica has what its master had.
func waitReplicated(t *testing.T, masters []string) {
	t.Helper()
	offset := func(info, field string) int64 {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return -1
	}
	for _, m := range masters {
		c := goredis.NewClient(&goredis.Options{Addr: m})
		testenv.WaitFor(t, 5*time.Second, func() bool {
			info, err := c.Info(t.Context(), "replication").Result()
			if err != nil {
				return false
			}
			want := offset(info, "master_repl_offset")
			for _, line := range strings.Split(info, "\n") {
				// slave0:ip=127.0.0.1,port=...,state=online,offset=N,lag=0
				if strings.HasPrefix(line, "slave") && strings.Contains(line, "offset=") {
					_, rest, _ := strings.Cut(line, "offset=")
					got, _ := strconv.ParseInt(strings.Split(rest, ",")[0], 10, 64)
					if got < want {
						return false
					}
				}
			}
			return true
		})
		c.Close()
	}
}

// With replica reads on a Cluster of three masters with a replica each, the
// inbox and profile reads are served by the replicas, none by the masters;
// the counters, rate limits and the registry never reach a replica (replicas
// run only what replication sends them, which is the scripts' effects, never
// a script or a read).
func TestClusterReplicaReads(t *testing.T) {
	seed := testenv.RedisClusterAddr(t)
	masters, replicas := clusterNodes(t, seed)
	if len(replicas) == 0 {
		t.Fatalf("the cluster at %s has no replica (scripts/services.sh cluster makes one per master)", seed)
	}
	c := open(t, redis.Options{Addrs: []string{seed}, ReplicaReads: true})
	ctx := t.Context()
	ix, pc := c.InboxIndex(), c.ProfileCache()
	const users = 30
	now := time.Now()
	for i := range users {
		u := fmt.Sprint("user-", i)
		conv := server.Conversation{ID: "dm:" + u, CreatedAt: now, LastMessageAt: now}
		if err := ix.Fill(ctx, u, []server.InboxEntry{{Conversation: conv}}); err != nil {
			t.Fatal(err)
		}
		if err := pc.Set(ctx, server.Profile{UserID: u, DisplayName: "User " + u}); err != nil {
			t.Fatal(err)
		}
	}
	waitReplicated(t, masters)

	reads := []string{"get", "evalsha_ro", "eval_ro"}
	beforeR, beforeM := commandCalls(t, replicas), commandCalls(t, masters)
	for i := range users {
		u := fmt.Sprint("user-", i)
		ids, err := ix.Top(ctx, u, 10)
		if err != nil || len(ids) != 1 || ids[0] != "dm:"+u {
			t.Fatalf("Top(%s) from a replica: %v, %v", u, ids, err)
		}
		p, ok, err := pc.Get(ctx, u)
		if err != nil || !ok || p.DisplayName != "User "+u {
			t.Fatalf("Get(%s) from a replica: %+v, %v, %v", u, p, ok, err)
		}
	}
	afterR, afterM := commandCalls(t, replicas), commandCalls(t, masters)
	if n := delta(beforeR, afterR, reads...); n < 2*users {
		t.Errorf("replicas served %d reads of %d", n, 2*users)
	}
	if n := delta(beforeM, afterM, reads...); n != 0 {
		t.Errorf("masters served %d reads (%v), want 0", n, reads)
	}
	t.Logf("%d inbox and profile reads: replicas ran %d read commands, masters %d", 2*users, delta(beforeR, afterR, reads...), delta(beforeM, afterM, reads...))

	// What must see the latest write: counters, rate limits, the registry,
	// the send path's scripts.
	primaryOnly := []string{"get", "mget", "exists", "smembers", "hgetall", "hget", "hmget", "evalsha", "eval", "evalsha_ro", "eval_ro", "rejected"}
	seq, rl, reg, sp := c.Sequencer(), c.RateLimiter(), c.Registry(), c.SendPath()
	beforeR = commandCalls(t, replicas)
	for i := range users {
		u := fmt.Sprint("user-", i)
		if _, err := seq.Next(ctx, "dm:"+u); err != nil {
			t.Fatal(err)
		}
		if _, _, err := rl.Allow(ctx, "send:"+u, 100); err != nil {
			t.Fatal(err)
		}
		if err := reg.Add(ctx, server.Presence{UserID: u, ConnID: "c1", NodeID: "n1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Nodes(ctx, []string{u}); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.LastSeen(ctx, []string{u}); err != nil {
			t.Fatal(err)
		}
		if a := sp.Admit(ctx, "send:"+u, 100, "dm:"+u, 1); a.RateErr != nil || a.SeqErr != nil {
			t.Fatalf("Admit: %+v", a)
		}
	}
	waitReplicated(t, masters)
	afterR = commandCalls(t, replicas)
	// Writes (incr, incrby, hset...) reach replicas too, as the effects of
	// the masters'; these only a client could send, and a write sent to a
	// replica would be rejected.
	for _, cmd := range primaryOnly {
		if n := delta(beforeR, afterR, cmd); n != 0 {
			t.Errorf("replicas ran %d %s calls for the counters, rate limits or registry, want 0", n, cmd)
		}
	}
}

// A single server with a replica: with its address in ReplicaAddrs, inbox and
// profile reads go to the replica and nothing else does; with the replica
// down, they go to the primary, and the breaker stays closed.
func TestSingleReplicaReads(t *testing.T) {
	// No wait before a full sync (its default is 5 s, for more replicas to join).
	primary := startOwnRedis(t, "--repl-diskless-sync-delay", "0")
	replica := startOwnRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(primary.port))
	c := open(t, redis.Options{Addrs: []string{primary.addr()}, ReplicaAddrs: []string{replica.addr()}})
	ctx := t.Context()
	ix, pc := c.InboxIndex(), c.ProfileCache()
	now := time.Now()
	if err := ix.Fill(ctx, "ann", []server.InboxEntry{{Conversation: server.Conversation{ID: "dm:ann:bob", CreatedAt: now}}}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Set(ctx, server.Profile{UserID: "ann", DisplayName: "Ann"}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, func() bool {
		info := goredis.NewClient(&goredis.Options{Addr: replica.addr()})
		defer info.Close()
		n, _ := info.DBSize(ctx).Result()
		return n >= 2
	})
	reads := []string{"get", "evalsha_ro", "eval_ro"}
	beforeR, beforeP := commandCalls(t, []string{replica.addr()}), commandCalls(t, []string{primary.addr()})
	if ids, err := ix.Top(ctx, "ann", 10); err != nil || len(ids) != 1 {
		t.Fatalf("Top from the replica: %v, %v", ids, err)
	}
	if p, ok, err := pc.Get(ctx, "ann"); err != nil || !ok || p.DisplayName != "Ann" {
		t.Fatalf("Get from the replica: %+v, %v, %v", p, ok, err)
	}
	if _, err := c.Sequencer().Next(ctx, "dm:ann:bob"); err != nil {
		t.Fatal(err)
	}
	afterR, afterP := commandCalls(t, []string{replica.addr()}), commandCalls(t, []string{primary.addr()})
	if n := delta(beforeR, afterR, reads...); n < 2 {
		t.Errorf("the replica served %d reads, want 2", n)
	}
	if n := delta(beforeP, afterP, reads...); n != 0 {
		t.Errorf("the primary served %d reads, want 0", n)
	}
	// An INCR reaches the replica as replication, never from the client
	// (there it would be rejected: a replica is read-only).
	if n := delta(beforeP, afterP, "incr"); n != 1 {
		t.Errorf("the primary ran %d INCR, want 1", n)
	}
	if n := delta(beforeR, afterR, "rejected"); n != 0 {
		t.Errorf("the replica rejected %d calls, want 0", n)
	}

	replica.stop()
	for range 30 { // more than the breaker's minimum of calls
		if p, ok, err := pc.Get(ctx, "ann"); err != nil || !ok || p.DisplayName != "Ann" {
			t.Fatalf("Get with the replica down: %+v, %v, %v", p, ok, err)
		}
	}
	if s := c.BreakerState(); s != gobreaker.StateClosed {
		t.Fatalf("breaker %s with only the replica down", s)
	}
	// A replica down at start is an outage of the replica, not a mistake:
	// the client opens, reading from the primary meanwhile.
	open(t, redis.Options{Addrs: []string{primary.addr()}, ReplicaAddrs: []string{replica.addr()}})
}

// startTLSRedis starts a redis-server that speaks only TLS, with a
// certificate for 127.0.0.1 from a CA of the test's own; it returns the address and a TLS
// configuration that trusts the certificate.
func startTLSRedis(t *testing.T) (string, *tls.Config) {
	t.Helper()
	addr(t) // the same switch as the other integration tests
	ca := testcert.NewCA(t)
	leaf := ca.Leaf(t, "127.0.0.1")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, leaf.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, leaf.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	caFile := ca.WriteFile(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile, "--tls-auth-clients", "no",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	a := "127.0.0.1:" + strconv.Itoa(port)
	testenv.WaitFor(t, 5*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", a, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return a, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
}

// A Redis that wants TLS, reached in plain TCP, drops the connection: an
// outage would look the same, so Open asks again with a TLS handshake and
// says what to set.
func TestOpenTLS(t *testing.T) {
	a, conf := startTLSRedis(t)
	t.Run("ErrPlainToTLS", func(t *testing.T) {
		_, err := redis.Open(t.Context(), redis.Options{Addrs: []string{a}})
		if !errors.Is(err, redis.ErrConfig) || !strings.Contains(err.Error(), "set --redis-tls") {
			t.Fatalf("Open in plain TCP on a TLS-only Redis: %v", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		if c := open(t, redis.Options{Addrs: []string{a}, TLS: conf}); c.Mode() != redis.ModeSingle {
			t.Fatalf("opened as %s", c.Mode())
		}
	})
	t.Run("ErrUntrustedCertificate", func(t *testing.T) {
		_, err := redis.Open(t.Context(), redis.Options{Addrs: []string{a}, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
		if !errors.Is(err, redis.ErrConfig) || !strings.Contains(err.Error(), "TLS handshake failed") {
			t.Fatalf("Open with TLS on a certificate nobody trusts: %v", err)
		}
	})
}

// Reading keeps an inbox warm, but a replica cannot extend a TTL: a read there
// that finds the TTL run down by more than a 24th of InboxTTL sets it again on
// the primary; one that finds it fresh sends nothing to the primary.
func TestReplicaInboxReadRefreshesTTL(t *testing.T) {
	primary := startOwnRedis(t, "--repl-diskless-sync-delay", "0")
	replica := startOwnRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(primary.port))
	c := open(t, redis.Options{Addrs: []string{primary.addr()}, ReplicaAddrs: []string{replica.addr()}})
	ctx := t.Context()
	ix := c.InboxIndex()
	if err := ix.Fill(ctx, "ann", []server.InboxEntry{{Conversation: server.Conversation{ID: "dm:ann:bob", CreatedAt: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	p := goredis.NewClient(&goredis.Options{Addr: primary.addr()})
	defer p.Close()
	r := goredis.NewClient(&goredis.Options{Addr: replica.addr()})
	defer r.Close()
	k := c.Prefix() + "inbox:{ann}"
	replicated := func(ttl time.Duration) func() bool {
		return func() bool {
			got, err := r.PTTL(ctx, k).Result()
			return err == nil && got > ttl-time.Minute && got <= ttl
		}
	}
	testenv.WaitFor(t, 5*time.Second, replicated(24*time.Hour))

	before := commandCalls(t, []string{primary.addr()})
	if _, err := ix.Top(ctx, "ann", 10); err != nil {
		t.Fatal(err)
	}
	if n := delta(before, commandCalls(t, []string{primary.addr()}), "pexpire", "evalsha", "evalsha_ro", "eval_ro"); n != 0 {
		t.Fatalf("a read of a fresh inbox sent %d commands to the primary, want 0", n)
	}

	// Run the TTL down on the primary, as 2 hours without a refresh would.
	if err := p.PExpire(ctx, k, 22*time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, replicated(22*time.Hour))
	if _, err := ix.Top(ctx, "ann", 10); err != nil {
		t.Fatal(err)
	}
	if got := p.PTTL(ctx, k).Val(); got < 24*time.Hour-time.Minute {
		t.Fatalf("TTL on the primary %v after a read from the replica, want about 24h", got)
	}
}
