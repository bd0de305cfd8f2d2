package server_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// faultyWrites is a real store whose next message write fails as told: lost
// (made, then reported as timed out, as a DynamoDB that hangs after applying a
// transaction looks to the Service), refused (not made, the circuit open) or
// unsent (not made: the deadline passed before it was sent, as when SQLite's
// write queue stays full).
type faultyWrites struct {
	*sqlite.Store
	next       string       // "lost", "failed", "refused", "unsent" or ""
	maxAppend  int          // MaxAppend's answer when above 0
	lookupDown atomic.Bool  // SentMessages fails (the store still out)
	refused    atomic.Int32 // SentMessages calls failed so
}

func (f *faultyWrites) SentMessages(ctx context.Context, convID string, ids []string) (map[string]server.Message, error) {
	if f.lookupDown.Load() {
		f.refused.Add(1)
		return nil, fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	}
	return f.Store.SentMessages(ctx, convID, ids)
}

func (f *faultyWrites) fault(write func() error) error {
	mode := f.next
	f.next = ""
	return f.faultAs(mode, write)
}

func (f *faultyWrites) faultAs(mode string, write func() error) error {
	switch mode {
	case "refused":
		return fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	case "unsent":
		return fmt.Errorf("store: %w: %w", server.ErrNotApplied, context.DeadlineExceeded)
	case "failed": // not made, but said as a lost write is
		return fmt.Errorf("store: %w: %w", server.ErrUnavailable, context.DeadlineExceeded)
	case "lost":
		if err := write(); err != nil {
			return err
		}
		return fmt.Errorf("store: %w: %w", server.ErrUnavailable, context.DeadlineExceeded)
	}
	return write()
}

func (f *faultyWrites) AppendMessage(ctx context.Context, m server.Message, receivers []string) error {
	return f.fault(func() error { return f.Store.AppendMessage(ctx, m, receivers) })
}

func (f *faultyWrites) AppendMessages(ctx context.Context, msgs []server.Message, receivers []string) (dups []*server.DuplicateError, err error) {
	err = f.fault(func() error {
		var err error
		dups, err = f.Store.AppendMessages(ctx, msgs, receivers)
		return err
	})
	return dups, err
}

func (f *faultyWrites) MaxAppend(members int) int {
	if f.maxAppend > 0 {
		return f.maxAppend
	}
	return f.Store.MaxAppend(members)
}

// QueueAppend is the Service's usual path to the SQLite store: the same faults.
func (f *faultyWrites) QueueAppend(ctx context.Context, msgs []server.Message, receivers []string) func() ([]*server.DuplicateError, error) {
	mode := f.next
	f.next = ""
	if mode == "refused" || mode == "unsent" || mode == "failed" {
		return func() ([]*server.DuplicateError, error) { return nil, f.faultAs(mode, nil) }
	}
	wait := f.Store.QueueAppend(ctx, msgs, receivers)
	return func() ([]*server.DuplicateError, error) {
		dups, err := wait()
		if err == nil && mode == "lost" {
			return nil, fmt.Errorf("store: %w: %w", server.ErrUnavailable, context.DeadlineExceeded)
		}
		return dups, err
	}
}

// A send whose write may have been made is answered maybe_stored (not a plain
// unavailable a client could take for "not stored" and send anew under a new
// id); the resend with the same message_id gets the stored message, once. A
// write refused before it was sent is plain unavailable, and its resend is
// stored.
func TestSendMaybeStored(t *testing.T) {
	ctx := context.Background()
	store := &faultyWrites{Store: openStore(t)}
	svc := serviceOn(t, store, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	send := func(id string) (wire.SendResponse, bool, error) {
		return svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "text of " + id}, nil)
	}

	store.next = "lost"
	_, _, err := send("m1")
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeMaybeStored || we.RetryAfterMs <= 0 || we.Code.HTTPStatus() != 503 {
		t.Fatalf("send whose answer was lost: %v, want maybe_stored (503) with a retry hint", err)
	}
	resp, created, err := send("m1")
	if err != nil || created || resp.SeqNo != 1 {
		t.Fatalf("resend: %+v created=%v err=%v, want the stored seq 1, not stored again", resp, created, err)
	}

	store.next = "refused"
	if _, _, err := send("m2"); !errors.As(err, &we) || we.Code != wire.CodeUnavailable || we.RetryAfterMs <= 0 {
		t.Fatalf("send refused before the write: %v, want unavailable with a retry hint", err)
	}
	resp, created, err = send("m2")
	// The refused write had taken a seq_no: a gap, as after any failed write
	// (readers and unread counts go by the messages, not the numbers).
	if err != nil || !created || resp.SeqNo < 2 {
		t.Fatalf("resend of the refused one: %+v created=%v err=%v, want stored now after seq 1", resp, created, err)
	}

	h, err := svc.History(ctx, "bob", conv, 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	msgs := h.Messages
	slices.SortFunc(msgs, func(a, b wire.Message) int { return cmp.Compare(a.SeqNo, b.SeqNo) })
	for _, m := range msgs {
		ids = append(ids, fmt.Sprintf("%d:%s", m.SeqNo, m.MessageID))
	}
	if want := fmt.Sprint([]string{"1:m1", fmt.Sprintf("%d:m2", resp.SeqNo)}); fmt.Sprint(ids) != want {
		t.Fatalf("history %v, want %v: each message once, in order", ids, want)
	}
}

// A message whose write was made but answered as failed (maybe_stored) was
// never fanned out. It reaches the receiver's and the sender's other connected
// devices anyway: when the sender resends it (answered from the stored
// record), and a grace period after the failed answer when the sender never
// comes back. (The receiver's pending row also brings it at the delivery
// worker's next sweep; the sender's own devices have no such row.)
func TestMaybeStoredMessageReachesDevices(t *testing.T) {
	ctx := context.Background()
	conv := wire.DirectConversationID("alice", "bob")
	device := func(eng *protocol.Engine, user string) *frameLog {
		c, err := eng.Connect(ctx, user, "", user+"-device")
		if err != nil {
			t.Fatal(err)
		}
		log := &frameLog{}
		log.attach(c)
		// The connect's catch-up (which would find a stored message) is over
		// once a later request is answered: one worker serves both in order.
		eng.HandleFrame(c, wire.Frame{Type: wire.TypeSync, ID: "s0"})
		testenv.WaitFor(t, 5*time.Second, func() bool {
			return len(log.find(func(f wire.Frame) bool { return f.Type == wire.TypeSynced })) > 0
		})
		return log
	}
	setup := func(grace time.Duration) (send func(id string) error, store *faultyWrites, bob, alice *frameLog) {
		store = &faultyWrites{Store: openStore(t)}
		svc := serviceOn(t, store, server.Config{SendRate: -1, RedeliverAfter: grace})
		eng := engineOf(t, svc)
		registerAliceAndBob(t, svc)
		if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
			t.Fatal(err)
		}
		return func(id string) error {
			_, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "text of " + id}, nil)
			return err
		}, store, device(eng, "bob"), device(eng, "alice")
	}

	t.Run("resent", func(t *testing.T) {
		send, store, bob, alice := setup(time.Hour) // no worker within the test
		store.next = "lost"
		if err := send("m1"); err == nil {
			t.Fatal("the lost write was answered as stored")
		}
		if got := bob.seqs(conv); len(got) != 0 {
			t.Fatalf("bob got %v before the resend: the test's premise (no fan-out for a failed answer) is gone", got)
		}
		if err := send("m1"); err != nil {
			t.Fatal(err)
		}
		for name, log := range map[string]*frameLog{"bob": bob, "alice's other device": alice} {
			testenv.WaitFor(t, 5*time.Second, func() bool { return len(log.seqs(conv)) == 1 })
			if m := log.find(func(f wire.Frame) bool { return f.Type == wire.TypeMessage }); m[0].Message.MessageID != "m1" || m[0].Message.Content != "text of m1" {
				t.Fatalf("%s got %+v, want the stored message whole", name, m[0].Message)
			}
		}
	})
	t.Run("abandoned while the store stays out", func(t *testing.T) {
		send, store, _, alice := setup(100 * time.Millisecond)
		store.next = "lost"
		store.lookupDown.Store(true)
		if err := send("m1"); err == nil {
			t.Fatal("the lost write was answered as stored")
		}
		// The send's own lookup, then two checks fail: the store is out.
		testenv.WaitFor(t, 5*time.Second, func() bool { return store.refused.Load() >= 3 })
		if got := alice.seqs(conv); len(got) != 0 {
			t.Fatalf("alice's other device got %v while the store was out", got)
		}
		store.lookupDown.Store(false)
		testenv.WaitFor(t, 10*time.Second, func() bool { return len(alice.seqs(conv)) > 0 })
	})
	t.Run("abandoned", func(t *testing.T) {
		send, store, _, alice := setup(200 * time.Millisecond)
		store.next = "lost"
		if err := send("m1"); err == nil {
			t.Fatal("the lost write was answered as stored")
		}
		testenv.WaitFor(t, 5*time.Second, func() bool { return len(alice.seqs(conv)) > 0 })
		if got := fmt.Sprint(alice.seqs(conv)); got != "[1]" {
			t.Fatalf("alice's other device got seqs %s, want [1]", got)
		}
	})
}

// Every path of a send answers what is known of its write: maybe_stored when
// it may have been made (it timed out or lost its answer after it was sent),
// unavailable only when it certainly was not (the circuit was open, the
// deadline passed before it was sent, an earlier part of its batch failed),
// and an unavailable answer never says the message may be stored.
func TestSendAnswersSayWhatIsKnown(t *testing.T) {
	ctx := context.Background()
	store := &faultyWrites{Store: openStore(t)}
	svc := serviceOn(t, store, server.Config{SendRate: -1, RedeliverAfter: time.Hour})
	eng := engineOf(t, svc)
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m0", Content: "quoted"}, nil); err != nil {
		t.Fatal(err)
	}
	ws, frames := watchDevice(t, eng, "alice", "alice-ws")
	check := func(what string, err error, want wire.Code) {
		t.Helper()
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != want || we.RetryAfterMs <= 0 {
			t.Fatalf("%s: %v, want %s with a retry hint", what, err, want)
		}
		if maybe := strings.Contains(we.Message, "may"); maybe != (want == wire.CodeMaybeStored) {
			t.Fatalf("%s: answered %s %q: the text and the code disagree", what, we.Code, we.Message)
		}
	}
	var sent []string // every message_id tried, in order
	for mode, want := range map[string]wire.Code{"lost": wire.CodeMaybeStored, "refused": wire.CodeUnavailable, "unsent": wire.CodeUnavailable} {
		for _, path := range []string{"http", "http reply", "websocket"} {
			id := mode + "-" + strings.ReplaceAll(path, " ", "-")
			sent = append(sent, id)
			req := wire.SendRequest{MessageID: id, Content: "text of " + id}
			if path == "http reply" {
				req.ReplyTo = 1 // stored one at a time (AppendMessage)
			}
			store.next = mode
			var err error
			if path == "websocket" {
				eng.HandleFrame(ws, wire.Frame{Type: wire.TypeSend, ID: id, ConversationID: conv, MessageID: id, Content: req.Content})
				var answer []wire.Frame
				testenv.WaitFor(t, 5*time.Second, func() bool {
					answer = frames.find(func(f wire.Frame) bool { return f.ID == id })
					return len(answer) > 0
				})
				if answer[0].Type == wire.TypeError {
					err = answer[0].Error
				}
			} else {
				_, _, err = svc.Send(ctx, "alice", conv, req, nil)
			}
			check(mode+" over "+path, err, want)
		}
	}

	// A batch stored in parts (here two messages per write): the first write
	// is lost, and the part after it is never sent.
	store.maxAppend, store.next = 2, "lost"
	batch := []wire.SendRequest{{MessageID: "b1", Content: "b1"}, {MessageID: "b2", Content: "b2"}, {MessageID: "b3", Content: "b3"}}
	res := svc.SendMany(ctx, "alice", conv, batch, nil)
	for i, want := range []wire.Code{wire.CodeMaybeStored, wire.CodeMaybeStored, wire.CodeUnavailable} {
		check(fmt.Sprintf("batch message %d", i+1), res[i].Err, want)
	}
	for _, r := range batch {
		sent = append(sent, r.MessageID)
	}

	// Every one resent with its message_id, in order, is stored once, in order.
	for _, id := range sent {
		if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "text of " + id}, nil); err != nil {
			t.Fatalf("resend %s: %v", id, err)
		}
	}
	h, err := svc.History(ctx, "bob", conv, 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(h.Messages, func(a, b wire.Message) int { return cmp.Compare(a.SeqNo, b.SeqNo) })
	var got []string
	for _, m := range h.Messages[1:] {
		got = append(got, m.MessageID)
	}
	if len(got) != len(sent) {
		t.Fatalf("stored %v, want each of %v once", got, sent)
	}
}

// A send answered maybe_stored that was not stored, whose message_id another
// member then used for a message of their own: the check a grace period later
// finds that message, and leaves it alone (it had its own fan-out), instead of
// sending it to every device again as the lost send.
func TestMaybeStoredCheckIgnoresAnotherMembersMessage(t *testing.T) {
	ctx := context.Background()
	store := &faultyWrites{Store: openStore(t)}
	svc := serviceOn(t, store, server.Config{SendRate: -1, RedeliverAfter: 200 * time.Millisecond})
	eng := engineOf(t, svc)
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	_, alice := watchDevice(t, eng, "alice", "alice-device")
	store.next = "failed"
	if _, _, err := svc.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "x", Content: "bob's"}, nil); wire.ErrorCode(err) != wire.CodeMaybeStored {
		t.Fatalf("bob's send: %v, want maybe_stored", err)
	}
	if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "x", Content: "alice's"}, nil); err != nil {
		t.Fatal(err)
	}
	// alice's device has her message from its fan-out. (Not bob's: he does
	// not ack, so the delivery worker sends it to him again, as it should.)
	time.Sleep(time.Second) // the check runs 200 ms after bob's answer
	if got := alice.find(func(f wire.Frame) bool { return f.Type == wire.TypeMessage && f.Message.MessageID == "x" }); len(got) != 1 {
		t.Fatalf("alice's device got her x %d times, want once", len(got))
	}
}

// A batch whose write fails part way (here a reply, stored on its own) stops
// there: the sends after it are not tried, and answered unavailable, so that
// their resends, with the failed one's, are stored in the order they were
// sent, not the failed one after those that got through.
func TestSendsAfterAFailedWriteKeepTheirOrder(t *testing.T) {
	ctx := context.Background()
	store := &faultyWrites{Store: openStore(t)}
	svc := serviceOn(t, store, server.Config{SendRate: -1, RedeliverAfter: time.Hour})
	registerAliceAndBob(t, svc)
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m0", Content: "quoted"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := []wire.SendRequest{{MessageID: "r1", Content: "reply", ReplyTo: 1}, {MessageID: "p2", Content: "after it"}}
	store.next = "failed"
	res := svc.SendMany(ctx, "alice", conv, reqs, nil)
	if wire.ErrorCode(res[0].Err) != wire.CodeMaybeStored || wire.ErrorCode(res[1].Err) != wire.CodeUnavailable {
		t.Fatalf("answers %v, %v; want maybe_stored for the failed write and unavailable for the one after it", res[0].Err, res[1].Err)
	}
	res = svc.SendMany(ctx, "alice", conv, reqs, nil)
	if res[0].Err != nil || res[1].Err != nil || res[0].Resp.SeqNo >= res[1].Resp.SeqNo {
		t.Fatalf("resent: %+v; want both stored, in the order sent", res)
	}
}
