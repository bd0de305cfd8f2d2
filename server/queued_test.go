package server_test

import (
	"context"
	"fmt"
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
	bobsDevice, err := eng.Connect(ctx, "bob", "", "bob-1")
	if err != nil {
		t.Fatal(err)
	}
	var log frameLog
	log.attach(bobsDevice)

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
	go send("alice", "a1")
	first := queued()
	go send("bob", "b1")
	second := queued()
	if first.seq != 1 || second.seq != 2 {
		t.Fatalf("writes queued with seq %d and %d, want 1 and 2", first.seq, second.seq)
	}

	second.let()
	time.Sleep(50 * time.Millisecond) // time to answer seq 2, were it out of turn
	select {
	case a := <-answered:
		t.Fatalf("answered while the send before it was in flight: %s", a)
	default:
	}

	first.let()
	want := map[string]bool{"a1 seq 1 err <nil>": true, "b1 seq 2 err <nil>": true}
	for range 2 {
		if a := <-answered; !want[a] {
			t.Fatalf("answer %q, want one of %v", a, want)
		}
	}
	// The device may get them twice (its connect's catch-up reads what is
	// committed), but never seq 2 before seq 1.
	testenv.WaitFor(t, 5*time.Second, func() bool { return len(log.seqs(conv)) >= 2 })
	if got := log.seqs(conv); got[0] != 1 {
		t.Fatalf("bob's device got %v, want seq 1 first", got)
	}
}
