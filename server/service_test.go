package server_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// openStore opens a SQLite store in the test's directory, closed when it ends.
func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "chat.db"), sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func newService(t *testing.T, cfg server.Config) *server.Service {
	t.Helper()
	store := openStore(t)
	return serviceOn(t, store, cfg)
}

// serviceOn starts a Service with fresh in-process roles on store: what a
// process restart gives.
func serviceOn(t *testing.T, store server.Store, cfg server.Config) *server.Service {
	t.Helper()
	blobs := cfg.Blobs // the one backend a test may bring
	cfg.Backends = server.Backends{Store: store, Blobs: blobs, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
		Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
		Registry: inmem.NewRegistry(), Broker: inmem.NewBroker()}
	cfg.PasswordCost = 4
	cfg.Registration = server.RegistrationOpen
	svc, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	return svc
}

// engineOf starts the protocol engine over svc, as a node does: frames in,
// frames out. It is closed after svc shuts down.
func engineOf(t *testing.T, svc *server.Service) *protocol.Engine {
	t.Helper()
	eng := protocol.New(svc)
	t.Cleanup(func() {
		svc.Shutdown(context.Background())
		eng.Close()
	})
	return eng
}

func TestOverloadedWhenTooManyInFlight(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, server.Config{MaxInFlight: 1, SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	unlock := svc.LockConversation(conv)
	first := make(chan error, 1)
	go func() {
		_, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "held", Content: "waits for the lock"}, nil)
		first <- err
	}()
	// The first send is admitted and waits on the lock; the second is refused at once.
	deadline := time.Now().Add(5 * time.Second)
	for svc.InFlight() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("first send was never admitted")
		}
		time.Sleep(time.Millisecond)
	}
	_, _, err := svc.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "second", Content: "too many"}, nil)
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeOverloaded || we.RetryAfterMs <= 0 {
		t.Fatalf("second send: %v, want overloaded with a retry hint", err)
	}
	unlock()
	if err := <-first; err != nil {
		t.Fatalf("first send: %v", err)
	}
	// Capacity is back once the first is answered.
	if _, _, err := svc.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "third", Content: "now fine"}, nil); err != nil {
		t.Fatalf("after the first finished: %v", err)
	}
}

// A restart loses the in-process counter. With a gap in the stored numbers (a
// number taken by a send that then failed), a fresh counter would hand out the
// gap's number; the store refuses any seq at or below last_seq, so the message
// lands after every stored one instead of among them.
func TestRestartWithSeqGapKeepsOrder(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	before := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, before)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := before.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	// seq 1 and 2 were taken by sends that failed: 3 is the first stored. A fresh
	// counter starts at 1, which is free.
	for _, m := range []server.Message{
		{ConversationID: conv, SeqNo: 3, MessageID: "m3", SenderID: "alice", ReceiverID: "bob", Content: "three", Timestamp: time.Now()},
		{ConversationID: conv, SeqNo: 4, MessageID: "m4", SenderID: "alice", ReceiverID: "bob", Content: "four", Timestamp: time.Now()},
	} {
		if err := store.AppendMessage(ctx, m, []string{"bob"}); err != nil {
			t.Fatal(err)
		}
	}
	before.Shutdown(ctx)

	after := serviceOn(t, store, server.Config{SendRate: -1})
	r, _, err := after.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "m5", Content: "after restart"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.SeqNo != 5 {
		t.Fatalf("first send after restart got seq %d, want 5 (above the stored 4)", r.SeqNo)
	}
	h, err := after.History(ctx, "alice", conv, 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range h.Messages {
		got = append(got, m.Content)
	}
	if want := []string{"after restart", "four", "three"}; !slices.Equal(got, want) {
		t.Fatalf("history newest first: %q, want %q", got, want)
	}
}

// A batch of sends larger than the in-flight bound is let in when nothing else
// is in flight: refusing it for its size would refuse its every retry.
func TestBatchLargerThanInFlightBound(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, server.Config{MaxInFlight: 2, SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	reqs := sends(5)
	for i, err := range svc.SendBatch(ctx, "alice", conv, reqs) {
		if err != nil {
			t.Fatalf("message %d of a batch of 5 with a bound of 2 and nothing in flight: %v", i, err)
		}
	}
	if n := svc.InFlight(); n != 0 {
		t.Fatalf("%d sends still counted in flight after their answers", n)
	}
}

// An ack that finds the connection's request queue full is folded into the
// ack of its conversation already queued (acks are cumulative), not refused:
// an ack has no id, so its client could not tell which one was refused.
func TestAckFoldedWhenQueueFull(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var errs []string
	svc, store, eng, bob, conv := bobWithAQueueOfFour(t, func(f conn.Frame) { // keeps the errors
		if bytes.Contains(f.Data, []byte(`"type":"error"`)) {
			mu.Lock()
			errs = append(errs, string(f.Data))
			mu.Unlock()
		}
	})
	// Bob's first send waits on the conversation's lock, so his worker stops
	// there and what he sends next stays queued.
	unlock := svc.LockConversation(conv)
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSend, ID: "b0", ConversationID: conv, MessageID: "b0", Content: "held"})
	testenv.WaitFor(t, 5*time.Second, func() bool { return svc.InFlight() == 1 })
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: 1})
	for i := 1; i <= 3; i++ { // the queue's bound is 4
		eng.HandleFrame(bob, wire.Frame{Type: wire.TypeSend, ID: "b" + strconv.Itoa(i), ConversationID: conv, MessageID: "b" + strconv.Itoa(i), Content: "queued"})
	}
	eng.HandleFrame(bob, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: 3})
	unlock()
	testenv.WaitFor(t, 5*time.Second, func() bool {
		st, err := store.ListStatuses(ctx, conv, []string{"bob"})
		return err == nil && st[0].LastDeliveredSeq >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("bob got errors: %v", errs)
	}
}

// bobWithAQueueOfFour is a Service whose connections queue at most four
// requests, alice's three messages to bob stored, and bob connected through
// the protocol engine with a writer that hands each frame to seen.
func bobWithAQueueOfFour(t *testing.T, seen func(conn.Frame)) (*server.Service, *sqlite.Store, *protocol.Engine, *protocol.Session, string) {
	t.Helper()
	ctx := context.Background()
	store := openStore(t)
	svc := serviceOn(t, store, server.Config{SendRate: -1, SendBuffer: 4})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	aliceSends(t, svc, conv, 3)
	eng := engineOf(t, svc)
	bob, err := eng.Connect(ctx, "bob", "", "bob-1")
	if err != nil {
		t.Fatal(err)
	}
	bob.SetWriter(func() {
		go func() {
			var frames []conn.Frame
			for {
				var closed bool
				frames, closed = bob.Next(frames[:0])
				for _, f := range frames {
					seen(f)
				}
				if len(frames) == 0 || closed {
					return
				}
			}
		}()
	})
	return svc, store, eng, bob, conv
}

// aliceSends stores n messages from alice in conv, ids a0, a1, …
func aliceSends(t *testing.T, svc *server.Service, conv string, n int) {
	t.Helper()
	for i := range n {
		if _, _, err := svc.Send(context.Background(), "alice", conv, wire.SendRequest{MessageID: "a" + strconv.Itoa(i), Content: "hi"}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A batch of sends is counted against the sender's rate at once: the first
// ones within the limit are stored, the rest refused with a retry hint.
func TestBatchRateLimited(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, server.Config{SendRate: 3})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	reqs := sends(5)
	errs := svc.SendBatch(ctx, "alice", conv, reqs)
	for i, err := range errs {
		var we *wire.Error
		switch {
		case i < 3 && err != nil:
			t.Fatalf("message %d of 5 at 3 a second: %v, want stored", i, err)
		case i >= 3 && (!errors.As(err, &we) || we.Code != wire.CodeRateLimited || we.RetryAfterMs <= 0):
			t.Fatalf("message %d of 5 at 3 a second: %v, want rate_limited with a hint", i, err)
		}
	}
}

func registerAliceAndBob(t *testing.T, svc *server.Service) {
	t.Helper()
	for _, u := range []string{"alice", "bob"} {
		if _, err := svc.Register(context.Background(), wire.RegisterRequest{UserID: u, Password: "password-" + u}, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// sends is a batch of n sends with message ids m0, m1, …
func sends(n int) []wire.SendRequest {
	var reqs []wire.SendRequest
	for i := range n {
		reqs = append(reqs, wire.SendRequest{MessageID: "m" + strconv.Itoa(i), Content: "one of a batch"})
	}
	return reqs
}

// chunked is the SQLite store with the small transactions of a store like
// DynamoDB's: it asks for batches of at most max messages.
type chunked struct {
	*sqlite.Store
	max   int
	mu    sync.Mutex
	calls []int // the size of each AppendMessages call
}

func (c *chunked) MaxAppend(int) int { return c.max }

func (c *chunked) AppendMessages(ctx context.Context, msgs []server.Message, receivers []string) ([]*server.DuplicateError, error) {
	c.mu.Lock()
	c.calls = append(c.calls, len(msgs))
	c.mu.Unlock()
	return c.Store.AppendMessages(ctx, msgs, receivers)
}

// A batch longer than the store takes in one call is stored in calls of at most
// that many, numbered without gaps, in order.
func TestBatchStoredInChunks(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	store := &chunked{Store: st, max: 3}
	svc := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	for i, err := range svc.SendBatch(ctx, "alice", conv, sends(8)) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if !slices.Equal(store.calls, []int{3, 3, 2}) {
		t.Fatalf("AppendMessages calls of %v messages, want [3 3 2]", store.calls)
	}
	got, err := st.ListMessages(ctx, conv, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range got { // newest first
		if want := int64(8 - i); m.SeqNo != want || m.MessageID != "m"+strconv.Itoa(int(want-1)) {
			t.Fatalf("stored %d: seq %d %s, want seq %d m%d", i, m.SeqNo, m.MessageID, want, want-1)
		}
	}
	if len(got) != 8 {
		t.Fatalf("%d messages stored, want 8", len(got))
	}
}

// A send of a batch that is not stored (a reply to no message) uses no seq_no:
// the numbers the batch took ahead and did not use are given back, so the
// conversation's clients wait on no gap.
func TestBatchUnusedNumbersGivenBack(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, server.Config{})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	reqs := sends(3)
	reqs[2].ReplyTo = 99
	errs := svc.SendBatch(ctx, "alice", conv, reqs)
	if errs[0] != nil || errs[1] != nil || errs[2] == nil {
		t.Fatalf("batch with a reply to no message: %v; want the first two stored, the reply refused", errs)
	}
	resp, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "next", Content: "after"}, nil)
	if err != nil || resp.SeqNo != 3 {
		t.Fatalf("next send = seq %d, %v; want 3, no gap", resp.SeqNo, err)
	}
}
