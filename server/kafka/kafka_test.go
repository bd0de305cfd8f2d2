package kafka_test

// These tests run the queue against franz-go's kfake: an in-process Kafka
// that speaks the real wire protocol (produce, fetch, consumer groups, offset
// commits). A real broker cannot be installed on the machines this project
// builds on (no Debian package, no download), so kfake stands in for it, as
// the DynamoDB-compatible test server stands in for DynamoDB.

import (
	"context"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/breaker"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/kafka"
	"github.com/chatterm/chat/server/roletest"
)

// cluster starts a kfake cluster for the test.
func cluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// open opens a queue on brokers in front of store, closed with the test.
func open(t *testing.T, o kafka.Options, store server.VersionedRegistry) *kafka.Registry {
	t.Helper()
	if o.Topic == "" {
		o.Topic = "registry-" + strings.NewReplacer("/", "-").Replace(t.Name())
	}
	if o.Partitions == 0 {
		o.Partitions = 4
	}
	r, err := kafka.Open(ctx(t), o, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRegistry(t *testing.T) {
	c := cluster(t)
	roletest.Registry(t, func(t *testing.T) server.Registry {
		return open(t, kafka.Options{Brokers: c.ListenAddrs()}, inmem.NewRegistry())
	})
}

// recording is a real registry that also notes the order Apply got changes in.
type recording struct {
	*inmem.Registry
	mu      sync.Mutex
	applied []server.PresenceChange
}

func (r *recording) Apply(ctx context.Context, cs []server.PresenceChange) error {
	r.mu.Lock()
	r.applied = append(r.applied, cs...)
	r.mu.Unlock()
	return r.Registry.Apply(ctx, cs)
}

// One user's updates are applied in the order its node published them, with
// two workers sharing the topic's partitions.
func TestOrderPerUser(t *testing.T) {
	c := cluster(t)
	store := &recording{Registry: inmem.NewRegistry()}
	o := kafka.Options{Brokers: c.ListenAddrs(), Topic: "order", Partitions: 8}
	pub := open(t, o, store)
	open(t, o, store) // a second node's worker
	users := []string{"ann", "bob", "cat", "dan", "eve", "fay"}
	const conns = 40
	for i := range conns {
		for _, u := range users {
			p := server.Presence{UserID: u, ConnID: "c" + string(rune('A'+i%26)) + string(rune('a'+i/26)), NodeID: "n1"}
			if err := pub.Add(ctx(t), p); err != nil {
				t.Fatal(err)
			}
			if i < conns-1 { // the last connection of each stays
				if err := pub.Remove(ctx(t), p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := pub.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	// A rebalance (the second worker joining) can hand a partition over
	// before its offsets are committed, and the new owner applies again what
	// the old one had: a replay of versions already applied, which Apply
	// ignores (TestReplayIsIdempotent). What must hold is that every version
	// is first applied after every lower one of its user.
	last := map[string]int64{}
	seen := map[string]map[int64]bool{}
	count := map[string]int{}
	for _, ch := range store.applied {
		if seen[ch.UserID] == nil {
			seen[ch.UserID] = map[int64]bool{}
		}
		if seen[ch.UserID][ch.Version] {
			continue // a replay
		}
		if ch.Version <= last[ch.UserID] {
			t.Fatalf("user %s: version %d first applied after %d", ch.UserID, ch.Version, last[ch.UserID])
		}
		seen[ch.UserID][ch.Version] = true
		last[ch.UserID] = ch.Version
		count[ch.UserID]++
	}
	for _, u := range users {
		if count[u] != 2*conns-1 {
			t.Errorf("user %s: %d distinct updates applied, want %d", u, count[u], 2*conns-1)
		}
	}
	got, err := pub.Nodes(ctx(t), users)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(users) {
		t.Fatalf("Nodes = %v, want every user on n1", got)
	}
}

// A worker that applied updates and then crashed before committing leaves
// them to be applied again: the versions make the replay a no-op, so a closed
// connection does not come back and its last-seen time does not move.
func TestReplayIsIdempotent(t *testing.T) {
	c := cluster(t)
	store := inmem.NewRegistry()
	o := kafka.Options{Brokers: c.ListenAddrs(), Topic: "replay", Group: "replay-workers", Partitions: 2}
	r := open(t, o, store)
	stays := server.Presence{UserID: "ann", ConnID: "c1", NodeID: "n1"}
	gone := server.Presence{UserID: "bob", ConnID: "c1", NodeID: "n1"}
	for _, err := range []error{r.Add(ctx(t), stays), r.Add(ctx(t), gone), r.Remove(ctx(t), gone)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
	seen, err := store.LastSeen(ctx(t), []string{"bob"})
	if err != nil || seen["bob"].IsZero() {
		t.Fatalf("LastSeen[bob] = %v, %v; want a time", seen, err)
	}
	r.Close()

	// The crash: the group's offsets back to the start, as if nothing had
	// been committed; a new worker takes the partitions and applies all again.
	adm := admin(t, c)
	if _, err := adm.CommitOffsets(ctx(t), o.Group, offsetsAt(t, adm, o.Topic, false)); err != nil {
		t.Fatal(err)
	}
	open(t, o, store)
	caughtUp(t, adm, o)

	got, err := store.Nodes(ctx(t), []string{"ann", "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"ann": {"n1"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("Nodes after the replay = %v, want %v", got, want)
	}
	again, err := store.LastSeen(ctx(t), []string{"bob"})
	if err != nil || !again["bob"].Equal(seen["bob"]) {
		t.Fatalf("LastSeen[bob] after the replay = %v, %v; want %v unchanged", again["bob"], err, seen["bob"])
	}
}

// admin is an admin client on c.
func admin(t *testing.T, c *kfake.Cluster) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// offsetsAt is every partition of topic at its start, or its end.
func offsetsAt(t *testing.T, adm *kadm.Client, topic string, end bool) kadm.Offsets {
	t.Helper()
	list := adm.ListStartOffsets
	if end {
		list = adm.ListEndOffsets
	}
	l, err := list(ctx(t), topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	return l.Offsets()
}

// caughtUp waits until o's group has committed every partition's end.
func caughtUp(t *testing.T, adm *kadm.Client, o kafka.Options) {
	t.Helper()
	end := offsetsAt(t, adm, o.Topic, true)
	testenv.WaitFor(t, 20*time.Second, func() bool {
		got, err := adm.FetchOffsets(ctx(t), o.Group)
		if err != nil {
			return false
		}
		ok := true
		end.Each(func(e kadm.Offset) {
			if c, found := got.Lookup(e.Topic, e.Partition); e.At > 0 && (!found || c.At < e.At) {
				ok = false
			}
		})
		return ok
	})
}

// freePort is a port nothing listens on now, for a cluster that must come
// back on the same address.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// When the brokers go away, updates are written to the registry directly,
// with one WARN; when they come back, one INFO, and updates take the queue
// again. An Add that was in the topic before the outage, applied after the
// Remove written directly during it, does not bring the connection back.
func TestFallbackWhenTheBrokerGoesAway(t *testing.T) {
	dir, port := t.TempDir(), freePort(t)
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(dir))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start()
	var logs testenv.LogBuffer
	store := inmem.NewRegistry()
	o := kafka.Options{Brokers: c.ListenAddrs(), Topic: "fallback", Group: "fallback-workers", Partitions: 2,
		CallTimeout: 300 * time.Millisecond, Breaker: breaker.Options{OpenFor: 200 * time.Millisecond, Probes: 1},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	pubOpts := o
	pubOpts.NoWorkers = true // nothing applies what is queued until the end
	pub := open(t, pubOpts, store)
	// early is the node of bob's connection: its Add is queued, then, with
	// Kafka gone, its Remove is written directly, and the node stops (so the
	// Remove it still buffered for Kafka is never published).
	earlyOpts := pubOpts
	earlyOpts.Logger = nil
	early := open(t, earlyOpts, store)
	bob := server.Presence{UserID: "bob", ConnID: "c1", NodeID: "n0"}
	if err := early.Add(ctx(t), bob); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Nodes(ctx(t), []string{"bob"}); len(got) != 0 {
		t.Fatalf("bob's Add was written directly, not queued (Kafka slow?): Nodes = %v", got)
	}

	c.Close()
	if err := early.Remove(ctx(t), bob); err != nil {
		t.Fatalf("with the broker gone: %v", err)
	}
	early.Close()
	ann := server.Presence{UserID: "ann", ConnID: "c1", NodeID: "n1"}
	if err := pub.Add(ctx(t), ann); err != nil {
		t.Fatalf("with the broker gone: %v", err)
	}
	// Written directly: ann is registered at once, with no worker running.
	if got, _ := store.Nodes(ctx(t), []string{"ann"}); len(got["ann"]) != 1 {
		t.Fatalf("ann after a direct Add: Nodes = %v", got)
	}
	for range 5 { // more failures: still one WARN
		if err := pub.Add(ctx(t), server.Presence{UserID: "dan", ConnID: "c1", NodeID: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "kafka is failing"); n != 1 {
		t.Fatalf("%d WARN lines for the outage, want 1:\n%s", n, logs.String())
	}

	c = start()
	t.Cleanup(c.Close)
	cat := server.Presence{UserID: "cat", ConnID: "c1", NodeID: "n1"}
	testenv.WaitFor(t, 20*time.Second, func() bool {
		time.Sleep(50 * time.Millisecond)
		pub.Add(ctx(t), cat)
		return strings.Contains(logs.String(), "kafka answers again")
	})
	// Queued again: eve is not registered until the workers come.
	eve := server.Presence{UserID: "eve", ConnID: "c1", NodeID: "n1"}
	if err := pub.Add(ctx(t), eve); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Nodes(ctx(t), []string{"eve"}); len(got) != 0 {
		t.Fatalf("eve's Add after the recovery was written directly: Nodes = %v\n%s", got, logs.String())
	}
	open(t, o, store) // the workers come: they apply bob's old Add, and eve's
	caughtUp(t, admin(t, c), o)
	got, err := store.Nodes(ctx(t), []string{"ann", "bob", "cat", "eve"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"ann": {"n1"}, "cat": {"n1"}, "eve": {"n1"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("Nodes after the outage = %v, want %v (bob's Add from before it must not bring bob back)", got, want)
	}
}

// ApplyRate paces the worker: updates wait in the topic rather than reach the
// registry at once. Only a lower bound on the time is checked (a slow machine
// can only make it longer): 60 updates at 100/s take at least 0.5 s.
func TestApplyRatePacesTheWorker(t *testing.T) {
	c := cluster(t)
	store := inmem.NewRegistry()
	o := kafka.Options{Brokers: c.ListenAddrs(), Topic: "paced", NoWorkers: true, Partitions: 1}
	pub := open(t, o, store)
	users := make([]string, 60)
	for i := range users {
		users[i] = "u" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		if err := pub.Add(ctx(t), server.Presence{UserID: users[i], ConnID: "c1", NodeID: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	o.NoWorkers, o.ApplyRate = false, 100
	open(t, o, store)
	if err := pub.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Fatalf("60 updates applied in %v at 100/s, want at least 0.5 s", took)
	}
	if got, _ := store.Nodes(ctx(t), users); len(got) != len(users) {
		t.Fatalf("%d of %d users registered", len(got), len(users))
	}
}
