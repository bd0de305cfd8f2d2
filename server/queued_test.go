package server_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// heldWrites is the SQLite store with each queued write's waiter held until
// the test lets it go (the write itself is queued and made as usual).
type heldWrites struct {
	*sqlite.Store
	queued chan heldWrite

	mu   sync.Mutex
	held []heldWrite
}

type heldWrite struct {
	seq     int64 // the write's first seq_no
	release chan struct{}
	once    *sync.Once
}

func (w heldWrite) let() { w.once.Do(func() { close(w.release) }) }

func (h *heldWrites) QueueAppend(ctx context.Context, msgs []server.Message, receivers []string) func() ([]*server.DuplicateError, error) {
	wait := h.Store.QueueAppend(ctx, msgs, receivers)
	w := heldWrite{seq: msgs[0].SeqNo, release: make(chan struct{}), once: new(sync.Once)}
	h.mu.Lock()
	h.held = append(h.held, w)
	h.mu.Unlock()
	h.queued <- w
	return func() ([]*server.DuplicateError, error) {
		<-w.release
		return wait()
	}
}

// letAll lets every held write go, so that a failed test does not leave
// sends waiting that the service's Close would wait for.
func (h *heldWrites) letAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.held {
		w.let()
	}
}

// A conversation's next send is numbered and its write queued while the send
// before it still waits for its own, so the two can share a commit; and the
// later send is not answered or handed to connections before the earlier one,
// even when its write is done first.
func TestSendQueuesBehindAWriteInFlight(t *testing.T) {
	ctx := context.Background()
	store := &heldWrites{Store: openStore(t), queued: make(chan heldWrite, 4)}
	svc := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	eng := engineOf(t, svc)
	t.Cleanup(store.letAll) // before the service's and the engine's Shutdown, which wait for sends
	_, log := watchDevice(t, eng, "bob", "bob-1")

	answered := make(chan string, 2)
	send := func(user, id string) {
		resp, _, err := svc.Send(ctx, user, conv, wire.SendRequest{MessageID: id, Content: "hi"}, nil)
		answered <- fmt.Sprintf("%s seq %d err %v", id, resp.SeqNo, err)
	}
	queued := func() heldWrite {
		t.Helper()
		select {
		case w := <-store.queued:
			return w
		case <-time.After(5 * time.Second):
			t.Fatal("a send's write was not queued while the conversation's write before it was in flight")
			return heldWrite{}
		}
	}
	// The conversation's first send on this node goes under the lock (its
	// last seq_no is not known yet); the ones after it queue.
	if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "a0", Content: "first"}, nil); err != nil {
		t.Fatal(err)
	}
	go send("alice", "a1")
	first := queued()
	go send("bob", "b1")
	second := queued()
	if first.seq != 2 || second.seq != 3 {
		t.Fatalf("writes queued with seq %d and %d, want 2 and 3", first.seq, second.seq)
	}

	second.let()
	time.Sleep(50 * time.Millisecond) // time to answer seq 2, were it out of turn
	select {
	case a := <-answered:
		t.Fatalf("answered while the send before it was in flight: %s", a)
	default:
	}

	first.let()
	want := map[string]bool{"a1 seq 2 err <nil>": true, "b1 seq 3 err <nil>": true}
	for range 2 {
		if a := <-answered; !want[a] {
			t.Fatalf("answer %q, want one of %v", a, want)
		}
	}
	// The device may get them twice (its connect's catch-up reads what is
	// committed), but never seq 3 before seq 2.
	testenv.WaitFor(t, 5*time.Second, func() bool { return len(firstSeen(log.seqs(conv))) >= 3 })
	if got := firstSeen(log.seqs(conv)); slices.Index(got, 3) < slices.Index(got, 2) {
		t.Fatalf("bob's device got %v, want seq 2 before seq 3", got)
	}
}

// After a restart the in-memory counter is behind the table: sends go the
// locked way, which re-seeds, until the conversation's last seq_no is known,
// and queue after that. Both members sending at once, all are stored once,
// above what was stored, with no number skipped, and a device gets them all.
func TestSendsRightAfterARestartBothWays(t *testing.T) {
	ctx := context.Background()
	after, conv := restartAfter(t, 4)
	_, log := watchDevice(t, engineOf(t, after), "alice", "alice-2")
	const each = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for _, user := range []string{"alice", "bob"} {
		wg.Go(func() {
			for i := range each {
				if _, _, err := after.Send(ctx, user, conv, wire.SendRequest{MessageID: user + strconv.Itoa(i), Content: "after"}, nil); err != nil {
					errs <- fmt.Errorf("%s's send %d: %w", user, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h, err := after.History(ctx, "alice", conv, 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, m := range h.Messages { // newest first
		if seen[m.MessageID] {
			t.Fatalf("%s stored twice", m.MessageID)
		}
		seen[m.MessageID] = true
		if i > 0 && m.SeqNo >= h.Messages[i-1].SeqNo {
			t.Fatalf("history out of order at %d: seq %d after %d", i, m.SeqNo, h.Messages[i-1].SeqNo)
		}
		if m.Content == "after" && m.SeqNo <= 4 {
			t.Fatalf("%s stored at seq %d, among the messages from before the restart", m.MessageID, m.SeqNo)
		}
	}
	checkNoHole(t, h.Messages)
	if len(h.Messages) != 4+2*each {
		t.Fatalf("%d messages stored, want %d", len(h.Messages), 4+2*each)
	}
	// The device gets every message (some twice: its connect's catch-up reads
	// what is committed; the order there is the catch-up's, checked in
	// server/conn).
	testenv.WaitFor(t, 5*time.Second, func() bool { return len(firstSeen(log.seqs(conv))) >= 2*each })
	got := slices.Sorted(slices.Values(firstSeen(log.seqs(conv))))
	if got[0] != 5 || got[len(got)-1] != 4+2*each {
		t.Fatalf("device got %v, want 5 to %d", got, 4+2*each)
	}
}

// firstSeen is seqs without repeats, each at its first appearance.
func firstSeen(seqs []int64) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for _, s := range seqs {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// After a restart the in-memory counter starts at 0. A first batch larger
// than the conversation takes numbers past its last seq_no along with the
// taken ones; when the first collides, the numbers past last_seq are given
// back before the counter is re-seeded, so the batch is stored right after
// the old messages, with no hole (a hole holds the clients' acks for HoleWait).
func TestBatchLargerThanTheConversationAfterARestart(t *testing.T) {
	ctx := context.Background()
	after, conv := restartAfter(t, 3)
	reqs := make([]wire.SendRequest, 7)
	for i := range reqs {
		reqs[i] = wire.SendRequest{MessageID: "new" + strconv.Itoa(i), Content: "after"}
	}
	for i, res := range after.SendMany(ctx, "alice", conv, reqs, nil) {
		if res.Err != nil {
			t.Fatalf("send %d: %v", i, res.Err)
		}
		if want := int64(4 + i); res.Resp.SeqNo != want {
			t.Fatalf("send %d stored at seq %d, want %d: a hole after the old messages", i, res.Resp.SeqNo, want)
		}
	}
	if _, _, err := after.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "next", Content: "after"}, nil); err != nil {
		t.Fatal(err)
	}
	h, err := after.History(ctx, "alice", conv, 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkNoHole(t, h.Messages)
	if len(h.Messages) != 3+7+1 {
		t.Fatalf("%d messages stored, want 11", len(h.Messages))
	}
}

// restartAfter stores old messages from alice to bob on a Service, shuts it
// down, and returns a new Service on the same store, as after a restart: its
// in-memory counter starts behind the table.
func restartAfter(t *testing.T, old int) (*server.Service, string) {
	t.Helper()
	ctx := context.Background()
	store := openStore(t)
	before := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, before)
	conv := wire.DirectConversationID("alice", "bob")
	for i := range old {
		if _, _, err := before.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "old" + strconv.Itoa(i), Content: "before"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before.Shutdown(ctx)
	return serviceOn(t, store, server.Config{SendRate: -1}), conv
}

// checkNoHole fails unless msgs (newest first) are numbered from 1 with no
// number skipped: a hole holds the conversation's clients up for HoleWait.
func checkNoHole(t *testing.T, msgs []wire.Message) {
	t.Helper()
	for i, m := range msgs {
		if want := int64(len(msgs) - i); m.SeqNo != want {
			t.Fatalf("message %d from the newest is seq %d, want %d: a hole", i, m.SeqNo, want)
		}
	}
}
