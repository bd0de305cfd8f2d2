package redis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/redis"
)

// ownRedis is a redis-server of this test's own, which it may stop and restart.
type ownRedis struct {
	t     *testing.T
	port  int
	cmd   *exec.Cmd
	extra []string // more redis-server arguments
}

func startOwnRedis(t *testing.T, extra ...string) *ownRedis {
	t.Helper()
	addr(t) // the same switch as the other integration tests
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not on PATH: %v", err)
	}
	_ = bin
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &ownRedis{t: t, port: port, extra: extra}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *ownRedis) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

func (r *ownRedis) start() {
	r.t.Helper()
	args := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir(), "--logfile", filepath.Join(r.t.TempDir(), "log")}, r.extra...)
	r.cmd = exec.Command("redis-server", args...)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", r.addr(), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if i > 100 {
			r.t.Fatalf("redis-server on %d did not start: %v", r.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *ownRedis) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

func gaugeState(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "chat_circuit_breaker_state" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service" && l.GetValue() == "redis" {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal("no chat_circuit_breaker_state{service=redis}")
	return -1
}

// TestRedisDown: with Redis gone every call fails within about the dial timeout,
// the breaker opens and then fails at once, and everything recovers when Redis
// returns — with empty memory, as after a crash: counters restart at 1 until
// Reseed, inboxes are cold, and the broker's subscription comes back by itself.
func TestRedisDown(t *testing.T) {
	r := startOwnRedis(t)
	reg := prometheus.NewRegistry()
	c := client(t, redis.Options{Addrs: []string{r.addr()}, Registerer: reg,
		Breaker: redis.BreakerOptions{OpenFor: 300 * time.Millisecond, Probes: 1}})
	ctx := t.Context()
	seq, inbox, broker := c.Sequencer(), c.InboxIndex(), c.Broker()
	for range 3 {
		if _, err := seq.Next(ctx, "conv"); err != nil {
			t.Fatal(err)
		}
	}
	if err := inbox.Fill(ctx, "ann", []server.InboxEntry{{Conversation: server.Conversation{ID: "conv", LastMessageAt: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	if err := inbox.Touch(ctx, []string{"ann"}, "conv", time.Now()); err != nil {
		t.Fatal(err)
	}
	got := make(chan server.Envelope, 64)
	if err := broker.Subscribe(ctx, "n1", func(e server.Envelope) { got <- e }); err != nil {
		t.Fatal(err)
	}

	r.stop()
	var slowest time.Duration
	for i := 0; c.BreakerState() != gobreaker.StateOpen; i++ {
		if i == 20 {
			t.Fatal("breaker still closed after 20 failed calls")
		}
		start := time.Now()
		_, err := seq.Next(ctx, "conv")
		d := time.Since(start)
		slowest = max(slowest, d)
		if !errors.Is(err, redis.ErrUnavailable) {
			t.Fatalf("Next with Redis down: %v, want ErrUnavailable", err)
		}
	}
	if slowest > 250*time.Millisecond {
		t.Errorf("slowest failing call took %v; want about the 100ms dial timeout or less", slowest)
	}
	t.Logf("slowest call with Redis down: %v", slowest)
	if g := gaugeState(t, reg); g != 2 {
		t.Errorf("gauge = %v while open, want 2", g)
	}
	start := time.Now()
	_, _, err := c.RateLimiter().Allow(ctx, "ann", 5)
	if !errors.Is(err, redis.ErrUnavailable) || !errors.Is(err, gobreaker.ErrOpenState) {
		t.Fatalf("Allow with the circuit open: %v", err)
	}
	if d := time.Since(start); d > 5*time.Millisecond {
		t.Errorf("call with the circuit open took %v, want immediate", d)
	}

	r.start() // empty, as after a crash or FLUSHALL
	deadline := time.Now().Add(5 * time.Second)
	var n int64
	for {
		if n, err = seq.Next(ctx, "conv"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 5s after Redis returned: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n != 1 {
		t.Fatalf("first Next after the restart = %d, want 1 (the counter was lost)", n)
	}
	if s := c.BreakerState(); s != gobreaker.StateClosed {
		t.Errorf("breaker %v after recovery, want closed", s)
	}
	if g := gaugeState(t, reg); g != 0 {
		t.Errorf("gauge = %v after recovery, want 0", g)
	}
	// The Service reseeds from the store's last_seq on ErrSeqTaken.
	if err := seq.Reseed(ctx, "conv", 3); err != nil {
		t.Fatal(err)
	}
	if n, err := seq.Next(ctx, "conv"); err != nil || n != 4 {
		t.Fatalf("Next after Reseed(3) = %d, %v; want 4", n, err)
	}
	// Inboxes are cold again; scripts work though Redis forgot them.
	if _, err := inbox.Top(ctx, "ann", 10); !errors.Is(err, server.ErrCold) {
		t.Fatalf("Top after the restart: %v, want ErrCold", err)
	}
	if err := inbox.Fill(ctx, "ann", nil); err != nil {
		t.Fatal(err)
	}
	if err := inbox.Touch(ctx, []string{"ann"}, "conv", time.Now()); err != nil {
		t.Fatal(err)
	}
	if ids, err := inbox.Top(ctx, "ann", 10); err != nil || !slices.Equal(ids, []string{"conv"}) {
		t.Fatalf("Top = %q, %v", ids, err)
	}
	// go-redis resubscribes after reconnecting.
	for i := 0; ; i++ {
		env := server.Envelope{UserIDs: []string{"ann"}, Frame: []byte(fmt.Sprint(i))}
		if err := broker.Publish(ctx, "n1", env); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if i == 50 {
			t.Fatal("no envelope delivered 5s after Redis returned")
		}
	}
}

// TestFlushAll: FLUSHALL on a live Redis (an operator's mistake, a failover to an
// empty replica) is recovered by Reseed.
func TestFlushAll(t *testing.T) {
	r := startOwnRedis(t)
	c := client(t, redis.Options{Addrs: []string{r.addr()}})
	ctx := context.Background()
	seq := c.Sequencer()
	for range 5 {
		if _, err := seq.Next(ctx, "conv"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Universal().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := seq.Next(ctx, "conv"); err != nil || n != 1 {
		t.Fatalf("Next after FLUSHALL = %d, %v; want 1", n, err)
	}
	if err := seq.Reseed(ctx, "conv", 5); err != nil {
		t.Fatal(err)
	}
	if n, err := seq.Next(ctx, "conv"); err != nil || n != 6 {
		t.Fatalf("Next after Reseed(5) = %d, %v; want 6", n, err)
	}
}

// TestRedisHung: a Redis that accepts connections but never answers (stopped
// process, network black hole) costs a call the read timeout, not a hang.
func TestRedisHung(t *testing.T) {
	r := startOwnRedis(t)
	c := client(t, redis.Options{Addrs: []string{r.addr()}})
	ctx := t.Context()
	if _, err := c.Sequencer().Next(ctx, "conv"); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer r.cmd.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	_, err := c.Sequencer().Next(ctx, "conv")
	d := time.Since(start)
	if !errors.Is(err, redis.ErrUnavailable) {
		t.Fatalf("Next on a hung Redis: %v, want ErrUnavailable", err)
	}
	// CallTimeout (150ms) plus scheduling slack.
	if d > 400*time.Millisecond {
		t.Fatalf("Next on a hung Redis took %v", d)
	}
	t.Logf("call to a hung Redis failed after %v", d)
}

// TestSubscribeWhileDown: a node starting while Redis is down still starts; its
// subscription goes live when Redis comes up.
func TestSubscribeWhileDown(t *testing.T) {
	r := startOwnRedis(t)
	r.stop()
	c := client(t, redis.Options{Addrs: []string{r.addr()}, Breaker: redis.BreakerOptions{OpenFor: 100 * time.Millisecond}})
	got := make(chan server.Envelope, 64)
	start := time.Now()
	if err := c.Broker().Subscribe(t.Context(), "n1", func(e server.Envelope) { got <- e }); err != nil {
		t.Fatalf("Subscribe with Redis down: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Subscribe with Redis down took %v", d)
	}
	r.start()
	for i := 0; ; i++ {
		_ = c.Broker().Publish(t.Context(), "n1", server.Envelope{UserIDs: []string{"ann"}, Frame: []byte("x")})
		select {
		case <-got:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if i == 100 {
			t.Fatal("subscription not live 10s after Redis came up")
		}
	}
}

// logsOf keeps each node's log apart, by NodeID.
type logsOf struct {
	mu   sync.Mutex
	byID map[string]*bytes.Buffer
}

func (l *logsOf) option(c *node.Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]*bytes.Buffer{}
	}
	buf := &bytes.Buffer{}
	l.byID[c.NodeID] = buf
	c.Logger = slog.New(slog.NewTextHandler(lockedWriter{&l.mu, buf}, nil))
}

// count counts node's log lines containing s.
func (l *logsOf) count(node, s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.byID[node].String(), s)
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// A Redis outage with no traffic at all is one WARN line on every node, and
// one INFO line when Redis is back: the registry heartbeat (every 5 s) fails
// too seldom to open a circuit, which is all that used to be logged.
func TestRedisOutageLoggedOnEveryNode(t *testing.T) {
	r := startOwnRedis(t)
	logs := &logsOf{}
	twoNodesOn(t, r.addr(), logs.option)
	r.stop()
	nodes := []string{"node-a", "node-b"}
	testenv.WaitFor(t, 30*time.Second, func() bool {
		for _, n := range nodes {
			if logs.count(n, "redis is failing") == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(6 * time.Second) // more failed heartbeats: no more lines
	r.start()
	testenv.WaitFor(t, 30*time.Second, func() bool {
		for _, n := range nodes {
			if logs.count(n, "redis answers again") == 0 {
				return false
			}
		}
		return true
	})
	for _, n := range nodes {
		if f, a := logs.count(n, "redis is failing"), logs.count(n, "redis answers again"); f != 1 || a != 1 {
			t.Errorf("%s: %d failing and %d answering lines, want one each", n, f, a)
		}
	}
}
