package client_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// paced sends n messages into conv over a connection of its own, one every
// gap on a ticker (all at once with gap 0), as chatbench's steady sender
// does: a session's Enqueue commits its outbox with a sync first, which on
// a loaded machine stretches the gaps. It returns their ids in order.
func paced(t *testing.T, api *client.API, conv string, n int, gap time.Duration) []string {
	t.Helper()
	return sendRuns(t, api, conv, sendRun{n, gap})
}

// sendRun is n messages, one every gap (all at once with gap 0).
type sendRun struct {
	n   int
	gap time.Duration
}

// sendRuns sends the runs one after the other over one connection and
// returns the messages' ids in order, once the server has stored them all.
func sendRuns(t *testing.T, api *client.API, conv string, runs ...sendRun) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := client.Dial(ctx, api.Server(), api.Token(), httpClient(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	total := 0
	for _, r := range runs {
		total += r.n
	}
	stored := make(chan struct{}, total)
	go func() { // always reading; "sent" answers say each is stored
		for {
			f, err := conn.Read(ctx)
			if err != nil {
				return
			}
			if f.Type == wire.TypeSent {
				stored <- struct{}{}
			}
		}
	}()
	var ids []string
	for _, r := range runs {
		var tick <-chan time.Time
		if r.gap > 0 {
			tk := time.NewTicker(r.gap)
			defer tk.Stop()
			tick = tk.C
		}
		for range r.n {
			if tick != nil {
				<-tick
			}
			i := len(ids)
			id := fmt.Sprintf("paced-%s-%d", conv, i)
			ids = append(ids, id)
			f := wire.Frame{Type: wire.TypeSend, ID: strconv.Itoa(i), ConversationID: conv, MessageID: id, Content: "steady " + strconv.Itoa(i)}
			if err := conn.Write(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range total {
		select {
		case <-stored:
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not answer every send")
		}
	}
	return ids
}

// runSession runs d's session without the device's event recorder: the
// caller reads its events.
func runSession(d *device) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.sess.Run(ctx)
	}()
	d.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// drainCounter reads a session's events the way the TUI does: it blocks for
// one, then takes whatever is already queued, and counts each such wake-up.
type drainCounter struct {
	wakes    chan int // events taken at each wake-up
	messages chan int // MessageEvents taken at each wake-up
}

func countDrains(t *testing.T, sess *client.Session) *drainCounter {
	d := &drainCounter{wakes: make(chan int, 10000), messages: make(chan int, 10000)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		ch := sess.Events()
		for {
			var ev client.Event
			select {
			case ev = <-ch:
			case <-ctx.Done():
				return
			}
			n, msgs := 0, 0
			for ev != nil {
				n++
				if _, ok := ev.(client.MessageEvent); ok {
					msgs++
				}
				select {
				case ev = <-ch:
				default:
					ev = nil
				}
			}
			d.wakes <- n
			d.messages <- msgs
		}
	}()
	return d
}

// take returns the events taken at each wake-up so far, and how many of
// those wake-ups carried a message.
func (d *drainCounter) take() (wakes []int, withMessages int) {
	for {
		select {
		case n := <-d.wakes:
			wakes = append(wakes, n)
			if <-d.messages > 0 {
				withMessages++
			}
		default:
			return wakes, withMessages
		}
	}
}

// A stream that goes on is held longer: at 200 msgs/s (a message every 5 ms)
// the first batches wait receiveHold (10 ms, two or three messages a commit)
// and later ones receiveHoldSteady (30 ms, six or seven).
func TestSteadyStreamSharesCommitsAndEvents(t *testing.T) {
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, false)
	drains := countDrains(t, bob.sess)
	runSession(bob)
	waitConnected(alice, bob)
	time.Sleep(100 * time.Millisecond)
	drains.take() // the connect's
	const n = 120
	ids := paced(t, alice.sess.API(), conv, n, 5*time.Millisecond)
	bob.waitFor("the whole stream", func() bool { return len(bob.cached(conv)) == n })
	checkOnceInOrder(t, bob, conv, ids)
	_, commits := log.reset()
	time.Sleep(100 * time.Millisecond) // the last commit's events reach the reader
	wakes, withMessages := drains.take()
	t.Logf("%d messages in %d commits %v; the reader woke %d times (%d with messages), taking %v", n, len(commits), commits, len(wakes), withMessages, wakes)
	if len(commits) > n/4 {
		t.Fatalf("%d messages 5 ms apart took %d commits, want at most %d (four or more a commit once the stream is steady)", n, len(commits), n/4)
	}
	// The reader's wake-ups are logged, not asserted: the session emits a
	// commit's events one by one, and a reader scheduled between two of them
	// wakes twice for one commit (27 wake-ups for 21 commits in a -race run
	// of CI), which says nothing of the hold.
}

// A burst arrives queued, and the queue batches it already: a batch that
// finds receiveQueued (16) frames or more waiting is not held, so the
// burst's last messages are not delayed on their way to the screen.
func TestBurstIsNotHeld(t *testing.T) {
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, true)
	const n = 300
	ids := paced(t, alice.sess.API(), conv, n, 0)
	bob.waitFor("the whole burst", func() bool { return len(bob.cached(conv)) == n })
	checkOnceInOrder(t, bob, conv, ids)
	log.mu.Lock()
	defer log.mu.Unlock()
	t.Logf("%d messages in %d commits, %d batches held; the most frames queued for a batch %d, for a held one %d", n, len(log.commits), log.held, log.maxQueued, log.heldQueued)
	if log.maxQueued < 16 {
		t.Skipf("no batch found 16 frames queued (the most: %d): the burst came slower than it was stored, and the test tests nothing", log.maxQueued)
	}
	if log.heldQueued >= 16 {
		t.Fatalf("a batch that found %d frames queued was held, want none held from 16 on", log.heldQueued)
	}
}

// After a burst the stream's count starts again: the first messages that
// come after it, fewer than 16 at a time, get the 10 ms hold of a stream's
// start, not the 30 ms of a steady one (a burst's last messages were later
// on screen than before the hold grew).
func TestBurstStartsTheStreamAgain(t *testing.T) {
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, true)
	ids := sendRuns(t, alice.sess.API(), conv, sendRun{40, 5 * time.Millisecond}, sendRun{300, 0}, sendRun{20, 5 * time.Millisecond})
	bob.waitFor("every message", func() bool { return len(bob.cached(conv)) == len(ids) })
	checkOnceInOrder(t, bob, conv, ids)
	log.mu.Lock()
	defer log.mu.Unlock()
	steady, lastBurst := false, -1
	for i, b := range log.batches {
		steady = steady || b.hold > 10*time.Millisecond
		if b.queued >= 16 {
			lastBurst = i
		}
	}
	t.Logf("batches (hold, queued): %v", log.batches)
	if !steady || lastBurst < 0 {
		t.Skipf("no steady hold before the burst (%v) or no batch found 16 queued (%d): the test tests nothing", steady, lastBurst)
	}
	for _, b := range log.batches[lastBurst+1:] {
		if b.hold == 0 {
			continue
		}
		if b.hold > 10*time.Millisecond {
			t.Fatalf("the first batch held after the burst waited %v, want the 10 ms of a stream's start", b.hold)
		}
		return
	}
	t.Skip("no batch was held after the burst: the test tests nothing")
}
