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
	t.Logf("%d messages in %d socket reads, %d commits, %d batches held", n, reads, len(commits), held)
	// One WebSocket message a frame: read one at a time, it takes n reads.
	if reads > n/2 {
		t.Fatalf("%d messages 2 ms apart took %d socket reads, want at most %d", n, reads, n/2)
	}
}
