package inmem_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/roletest"
)

func TestSequencer(t *testing.T) {
	roletest.Sequencer(t, func(*testing.T) server.Sequencer { return inmem.NewSequencer() })
}

func TestRateLimiter(t *testing.T) {
	roletest.RateLimiter(t, func(*testing.T) server.RateLimiter { return inmem.NewRateLimiter(nil) })
}

func TestInboxIndex(t *testing.T) {
	roletest.InboxIndex(t, func(*testing.T) server.InboxIndex { return inmem.NewInboxIndex(0) })
}

func TestProfileCache(t *testing.T) {
	roletest.ProfileCache(t, func(*testing.T) server.ProfileCache { return inmem.NewProfileCache(0, 0, nil) })
}

func TestRegistry(t *testing.T) {
	roletest.Registry(t, func(*testing.T) server.Registry { return inmem.NewRegistry() })
}

func TestVersionedRegistry(t *testing.T) {
	roletest.VersionedRegistry(t, func(*testing.T) server.VersionedRegistry { return inmem.NewRegistry() })
}

func TestBroker(t *testing.T) {
	roletest.Broker(t, func(*testing.T) server.Broker { return inmem.NewBroker() })
}

func TestRevocations(t *testing.T) {
	roletest.Revocations(t, func(*testing.T) (server.Revocations, server.Revocations) {
		r := inmem.NewRevocations()
		return r, r
	})
}

// clock is a settable time source.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestRateLimiterWindow(t *testing.T) {
	clk := newClock()
	r := inmem.NewRateLimiter(clk.now)
	ctx := t.Context()
	allow := func(want bool, wantRetry time.Duration) {
		t.Helper()
		ok, retry, err := r.Allow(ctx, "u", 2)
		if err != nil || ok != want || retry != wantRetry {
			t.Fatalf("Allow = %v, %v, %v; want %v, %v", ok, retry, err, want, wantRetry)
		}
	}
	allow(true, 0)
	clk.advance(300 * time.Millisecond)
	allow(true, 0)
	allow(false, 700*time.Millisecond) // the window started at the first event
	clk.advance(699 * time.Millisecond)
	allow(false, time.Millisecond)
	clk.advance(time.Millisecond)
	allow(true, 0) // a new window
	allow(true, 0)
	allow(false, time.Second)
}

func TestProfileCacheExpiry(t *testing.T) {
	clk := newClock()
	pc := inmem.NewProfileCache(time.Hour, 10*time.Minute, clk.now)
	ctx := t.Context()
	for i := range 100 {
		if err := pc.Set(ctx, server.Profile{UserID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (n int) {
		for i := range 100 {
			if _, ok, _ := pc.Get(ctx, fmt.Sprint(i)); ok {
				n++
			}
		}
		return n
	}
	clk.advance(time.Hour - time.Nanosecond)
	if n := count(); n != 100 {
		t.Fatalf("%d of 100 cached just before the TTL, want all", n)
	}
	clk.advance(5 * time.Minute)
	// With jitter spread over 10 minutes, about half have expired halfway through.
	if n := count(); n == 0 || n == 100 {
		t.Fatalf("%d of 100 cached halfway through the jitter: entries expire together", n)
	}
	clk.advance(5*time.Minute + time.Nanosecond)
	if n := count(); n != 0 {
		t.Fatalf("%d of 100 cached after TTL plus jitter, want none", n)
	}
}

func TestInboxIndexBounded(t *testing.T) {
	x := inmem.NewInboxIndex(3)
	ctx := t.Context()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var entries []server.InboxEntry
	for i := range 5 {
		entries = append(entries, server.InboxEntry{Conversation: server.Conversation{
			ID: fmt.Sprint("c", i), LastMessageAt: base.Add(time.Duration(i) * time.Minute)}})
	}
	if err := x.Fill(ctx, "u", entries); err != nil {
		t.Fatal(err)
	}
	got, err := x.Top(ctx, "u", 3)
	if err != nil || !slices.Equal(got, []string{"c4", "c3", "c2"}) {
		t.Fatalf("Top(3) = %q, %v", got, err)
	}
	// Asking for more than what a trimmed inbox keeps: the store must answer.
	if _, err := x.Top(ctx, "u", 4); !errors.Is(err, server.ErrCold) {
		t.Fatalf("Top(4) of a trimmed inbox: %v, want ErrCold", err)
	}
	// A new conversation pushes out the least recent.
	if err := x.Touch(ctx, []string{"u"}, "c9", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err = x.Top(ctx, "u", 3)
	if err != nil || !slices.Equal(got, []string{"c9", "c4", "c3"}) {
		t.Fatalf("Top(3) after Touch = %q, %v", got, err)
	}
}

// The send path calls these for every message: they must not allocate once the
// keys exist.
func TestHotPathAllocs(t *testing.T) {
	ctx := context.Background()
	seq, rl, ix, reg := inmem.NewSequencer(), inmem.NewRateLimiter(nil), inmem.NewInboxIndex(0), inmem.NewRegistry()
	users := []string{"ann", "bob"}
	if err := ix.Fill(ctx, "ann", nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_ = ix.Touch(ctx, users, "c", now)
	_, _ = seq.Next(ctx, "c")
	_, _, _ = rl.Allow(ctx, "ann", 1<<30)
	for name, f := range map[string]func(){
		"Sequencer.Next":    func() { _, _ = seq.Next(ctx, "c") },
		"RateLimiter.Allow": func() { _, _, _ = rl.Allow(ctx, "ann", 1<<30) },
		"InboxIndex.Touch":  func() { _ = ix.Touch(ctx, users, "c", now) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
	_ = reg.Add(ctx, server.Presence{UserID: "bob", ConnID: "1", NodeID: "n"})
	// Nodes allocates its answer map only (header and one bucket).
	if n := testing.AllocsPerRun(1000, func() { _, _ = reg.Nodes(ctx, users) }); n > 2 {
		t.Errorf("Registry.Nodes: %v allocations per call, want at most 2", n)
	}
}

func BenchmarkSendPath(b *testing.B) {
	ctx := context.Background()
	seq, rl, ix, reg := inmem.NewSequencer(), inmem.NewRateLimiter(nil), inmem.NewInboxIndex(0), inmem.NewRegistry()
	const nUsers = 1000
	users := make([]string, nUsers)
	for i := range users {
		users[i] = fmt.Sprint("user", i)
		_ = ix.Fill(ctx, users[i], nil)
		_ = reg.Add(ctx, server.Presence{UserID: users[i], ConnID: "c", NodeID: "n1"})
	}
	now := time.Now()
	var i atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := int(i.Add(1))
			pair := []string{users[n%nUsers], users[(n+1)%nUsers]}
			conv := pair[0] + ":" + pair[1]
			if _, _, err := rl.Allow(ctx, pair[0], 1<<30); err != nil {
				b.Fatal(err)
			}
			if _, err := seq.Next(ctx, conv); err != nil {
				b.Fatal(err)
			}
			_ = ix.Touch(ctx, pair, conv, now)
			if _, err := reg.Nodes(ctx, pair); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestInboxIndexIdle(t *testing.T) {
	clk := newClock()
	x := inmem.NewInboxIndex(0)
	x.SetIdle(time.Hour, clk.now)
	ctx := t.Context()
	for _, u := range []string{"reader", "idle"} {
		if err := x.Fill(ctx, u, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(50 * time.Minute)
	if _, err := x.Top(ctx, "reader", 5); err != nil { // reading keeps it warm
		t.Fatal(err)
	}
	// Touches do not: an inbox nobody reads goes cold.
	if err := x.Touch(ctx, []string{"idle", "reader"}, "c", clk.now()); err != nil {
		t.Fatal(err)
	}
	clk.advance(20 * time.Minute)
	if _, err := x.Top(ctx, "idle", 5); !errors.Is(err, server.ErrCold) {
		t.Fatalf("Top of an inbox unread for 70 minutes: %v, want ErrCold", err)
	}
	if got, err := x.Top(ctx, "reader", 5); err != nil || !slices.Equal(got, []string{"c"}) {
		t.Fatalf("Top(reader) = %q, %v", got, err)
	}
	// An inbox gone idle stays cold however many sends touch it.
	clk.advance(2 * time.Hour)
	if err := x.Fill(ctx, "new", nil); err != nil {
		t.Fatal(err)
	}
	if err := x.Touch(ctx, []string{"reader"}, "d", clk.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Top(ctx, "reader", 5); !errors.Is(err, server.ErrCold) {
		t.Fatalf("Top after 2h idle: %v, want ErrCold", err)
	}
}
