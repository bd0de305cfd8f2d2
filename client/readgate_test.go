package client_test

import (
	"testing"
	"time"

	"github.com/chatterm/chat/client"
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
	// and one for what came during the hold, sometimes one more for a frame
	// that came while that was read; a batch not held, one.
	most := 2*held + held/2 + (batches - held)
	if most >= n {
		t.Skipf("%d batches for %d messages: too few frames a batch to tell one read a frame from fewer", batches, n)
	}
	if reads > most {
		t.Fatalf("%d messages 2 ms apart in %d batches (%d held) took %d socket reads, want at most %d", n, batches, held, reads, most)
	}
}
