package client_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
)

// While a batch is held the reader leaves the socket alone, so a steady
// stream is read from it a few frames at a time, not one read a frame; and
// still every message is stored once, in order.
func TestHeldStreamReadInFewReads(t *testing.T) {
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, true)
	before, gated := client.SocketReads(bob.sess)
	if !gated {
		t.Fatal("bob's socket is not gated: the test tests nothing")
	}
	const n = 60
	ids := stream(t, alice, conv, n, 2*time.Millisecond)
	bob.waitFor("the whole stream", func() bool { return len(bob.cached(conv)) == n })
	checkOnceInOrder(t, bob, conv, ids)
	after, _ := client.SocketReads(bob.sess)
	held, commits := log.reset()
	if held == 0 {
		t.Fatal("no batch was held: the test tests nothing")
	}
	reads := after - before
	log.mu.Lock()
	batches := len(log.batches)
	log.mu.Unlock()
	t.Logf("%d messages in %d socket reads, %d commits, %d batches, %d held", n, reads, len(commits), batches, held)
	// Read one at a time, the stream takes a read a frame (one WebSocket
	// message each): n. Paused, a held batch takes its first frame's read
	// and one for what came during the hold, one more when that is more
	// than a read's buffer, sometimes another for a frame that came while
	// it was read (a loaded machine, -race); a batch not held, one.
	most := 3*held + (batches - held)
	if most >= n {
		t.Skipf("%d batches for %d messages: too few frames a batch to tell one read a frame from fewer", batches, n)
	}
	if reads > most {
		t.Fatalf("%d messages 2 ms apart in %d batches (%d held) took %d socket reads, want at most %d", n, batches, held, reads, most)
	}
}

// A connection cut while the reader is paused loses nothing: what the
// socket held unread is sent again after the reconnect (it was not acked),
// and every message is cached once, in order.
func TestStreamCutDuringHoldsLosesNothing(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	px := newProxy(t, hostport(t, srv.URL))
	bob := newDevice(t, bobAPI, px.URL(), "bob")
	log := &receiveLog{}
	log.hook(bob.sess)
	bob.run()
	waitConnected(alice, bob)
	if _, gated := client.SocketReads(bob.sess); !gated {
		t.Fatal("bob's socket is not gated: the test tests nothing")
	}
	var ids []string
	for round := range 3 {
		ids = append(ids, stream(t, alice, conv, 30, 2*time.Millisecond)...)
		if held, _ := log.reset(); held == 0 {
			t.Skipf("round %d: no batch was held before the cut (a slow machine): the test would test nothing", round)
		}
		// Cut while the stream's last batch is likely held, and come back.
		px.set(false)
		px.set(true)
	}
	bob.waitFor("every message", func() bool { return len(bob.cached(conv)) == len(ids) })
	checkOnceInOrder(t, bob, conv, ids)
	bob.waitFor("the stream acked", func() bool { return deliveredTo(t, aliceAPI, conv, "bob") == int64(len(ids)) })
}

// The pauses of a held stream raise the socket's low-water mark, and lower
// it again: a message after the stream, alone and far below the mark, still
// comes at once.
func TestHeldStreamRaisesTheLowWaterMarkAndLowersIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the low-water mark is raised on Linux only")
	}
	alice, bob, conv, log := holdSetup(t, client.DefaultAckDelay, true)
	ids := stream(t, alice, conv, 40, 2*time.Millisecond)
	bob.waitFor("the whole stream", func() bool { return len(bob.cached(conv)) == len(ids) })
	if held, _ := log.reset(); held == 0 {
		t.Skip("no batch was held (a slow machine): the test would test nothing")
	}
	if client.LowWaterPauses(bob.sess) == 0 {
		t.Fatal("batches were held, but no pause raised the socket's low-water mark")
	}
	time.Sleep(200 * time.Millisecond) // every hold over
	ids = append(ids, stream(t, alice, conv, 1, 0)...)
	bob.waitFor("the message after the stream", func() bool { return len(bob.cached(conv)) == len(ids) })
	checkOnceInOrder(t, bob, conv, ids)
}
