package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// receiveLog records what the session's receive hooks report.
type receiveLog struct {
	mu      sync.Mutex
	held    int   // batches held for more to join
	commits []int // each commit of received messages, with its size
	// the most frames a held batch found queued, and the most any batch did
	heldQueued, maxQueued int
	batches               []batchLog
}

// batchLog is one batch: how long it was held and how many frames it found
// queued.
type batchLog struct {
	hold   time.Duration
	queued int
}

func (r *receiveLog) hook(sess *client.Session) {
	client.SetReceiveHooks(sess, func(hold time.Duration, queued int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if hold > 0 {
			r.held++
			r.heldQueued = max(r.heldQueued, queued)
		}
		r.maxQueued = max(r.maxQueued, queued)
		r.batches = append(r.batches, batchLog{hold, queued})
	}, func(n int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.commits = append(r.commits, n)
	})
}

// reset forgets what was recorded so far and returns it.
func (r *receiveLog) reset() (held int, commits []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held, commits = r.held, r.commits
	r.held, r.commits = 0, nil
	return held, commits
}

// stream has alice's device send n messages into conv, every gap, and
// returns their ids.
func stream(t *testing.T, alice *device, conv string, n int, gap time.Duration) []string {
	t.Helper()
	var ids []string
	for i := range n {
		m, err := alice.sess.Enqueue(context.Background(), conv, fmt.Sprintf("steady %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.MessageID)
		time.Sleep(gap)
	}
	return ids
}

// holdSetup is alice and bob in a direct conversation, each on a device, with
// bob's receive hooks recorded; bob's AckDelay is ackDelay.
// With run false bob's device is made but not run: the caller runs it.
func holdSetup(t *testing.T, ackDelay time.Duration, run bool) (alice, bob *device, conv string, log *receiveLog) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv = direct(t, aliceAPI, "bob")
	alice = startDevice(t, aliceAPI, srv.URL, "alice")
	bob = newDevice(t, bobAPI, srv.URL, "bob", func(c *client.SessionConfig) { c.AckDelay = ackDelay })
	log = &receiveLog{}
	log.hook(bob.sess)
	if run {
		bob.run()
		waitConnected(alice, bob)
	}
	return alice, bob, conv, log
}

func waitConnected(devices ...*device) {
	for _, d := range devices {
		d.waitFor("connected", func() bool { return d.sess.State().Status == client.Connected })
	}
}

// checkOnceInOrder fails unless bob's cache holds exactly ids, in order.
func checkOnceInOrder(t *testing.T, bob *device, conv string, ids []string) {
	t.Helper()
	cached := bob.cached(conv)
	if len(cached) != len(ids) {
		t.Fatalf("bob cached %d messages, want %d", len(cached), len(ids))
	}
	for i, m := range cached {
		if m.MessageID != ids[i] || m.SeqNo != int64(i+1) {
			t.Fatalf("cached message %d is %s at seq %d, want %s at seq %d", i, m.MessageID, m.SeqNo, ids[i], i+1)
		}
	}
}

// Messages arriving a couple of ms apart share receive transactions: the
// batch holds open for the next ones instead of committing each alone.
func TestSteadyMessagesShareATransaction(t *testing.T) {
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, true)
	const n = 40
	ids := stream(t, alice, conv, n, 2*time.Millisecond)
	bob.waitFor("the whole stream", func() bool { return len(bob.cached(conv)) == n })
	checkOnceInOrder(t, bob, conv, ids)
	held, commits := log.reset()
	stored := 0
	for _, c := range commits {
		stored += c
	}
	if stored != n {
		t.Fatalf("the commits stored %d messages, want %d: %v", stored, n, commits)
	}
	t.Logf("%d messages in %d commits (%v), %d batches held", n, len(commits), commits, held)
	if len(commits) > 3*n/4 {
		t.Fatalf("%d messages 2 ms apart took %d commits, want at most %d (shared): %v", n, len(commits), 3*n/4, commits)
	}
}

// The hold is for a stream only: after a quiet spell a lone message is
// stored (and shown, and acked) at once.
func TestLoneMessageIsNotHeld(t *testing.T) {
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, true)
	ids := stream(t, alice, conv, 20, 2*time.Millisecond)
	bob.waitFor("the stream", func() bool { return len(bob.cached(conv)) == len(ids) })
	if held, _ := log.reset(); held == 0 {
		t.Fatal("no batch of the stream was held: the test tests nothing")
	}
	// A quiet spell far longer than receiveStreaming (25 ms); nothing here
	// depends on how fast anything runs.
	time.Sleep(300 * time.Millisecond)
	log.reset()
	ids = append(ids, stream(t, alice, conv, 1, 0)...)
	bob.waitFor("the lone message", func() bool { return len(bob.cached(conv)) == len(ids) })
	if held, commits := log.reset(); held != 0 || len(commits) != 1 {
		t.Fatalf("after a quiet spell the lone message went in %d commits with %d batches held, want 1 commit, none held", len(commits), held)
	}
	checkOnceInOrder(t, bob, conv, ids)
}

// Held or not, an ack leaves only after its messages are committed: at the
// moment each ack (or a send's ack_seq) leaves bob's device, his cache is
// stored up to it, all through a stream whose every ack goes at once.
func TestHeldMessagesAckedAfterTheirCommit(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	px := newProxy(t, hostport(t, srv.URL))
	bob := newDevice(t, bobAPI, px.URL(), "bob", func(c *client.SessionConfig) { c.AckDelay = -1 })
	var acks, early atomic.Int64
	var firstEarly atomic.Value
	px.setWatchOut(func(payload []byte) {
		for line := range wire.Frames(payload) {
			var f wire.Frame
			if err := json.Unmarshal(line, &f); err != nil || f.ConversationID != conv {
				continue
			}
			seq := f.AckSeq
			if f.Type == wire.TypeAck {
				seq = f.SeqNo
			}
			if seq == 0 {
				continue
			}
			acks.Add(1)
			if cur, _, err := bob.store.Cursor(bg, conv); err != nil || cur < seq {
				early.Add(1)
				firstEarly.CompareAndSwap(nil, fmt.Sprintf("ack of %d left with the cache stored to %d (%v)", seq, cur, err))
			}
		}
	})
	log := &receiveLog{}
	log.hook(bob.sess)
	bob.run()
	alice.waitFor("alice connected", func() bool { return alice.sess.State().Status == client.Connected })
	bob.waitFor("bob connected", func() bool { return bob.sess.State().Status == client.Connected })
	const n = 60
	ids := stream(t, alice, conv, n, 2*time.Millisecond)
	bob.waitFor("the stream acked", func() bool { return deliveredTo(t, aliceAPI, conv, "bob") == n })
	checkOnceInOrder(t, bob, conv, ids)
	if k := early.Load(); k > 0 {
		t.Fatalf("%d of %d acks left before their commit; the first: %s", k, acks.Load(), firstEarly.Load())
	}
	held, commits := log.reset()
	if held == 0 {
		t.Fatal("no batch was held: the test tests nothing")
	}
	t.Logf("%d acks, all after their commit; %d commits, %d batches held", acks.Load(), len(commits), held)
}
