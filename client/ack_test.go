package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
)

// A device acks what it stored after SessionConfig.AckDelay, or sooner with
// its next send into the conversation, which carries the ack (protocol 2's
// ack_seq) instead of an ack frame of its own.
func TestAckWaitsAndRidesOnASend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		reply bool
	}{
		{"carried by a reply", time.Hour, true},
		{"sent after the delay", 30 * time.Millisecond, false},
		{"sent at once", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := servertest.Start(t)
			aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
			conv := direct(t, aliceAPI, "bob")
			alice := startDevice(t, aliceAPI, srv.URL, "alice")
			bob := startDevice(t, bobAPI, srv.URL, "bob", func(c *client.SessionConfig) { c.AckDelay = tc.delay })
			for _, text := range []string{"one", "two"} {
				if _, err := alice.sess.Enqueue(ctx, conv, text); err != nil {
					t.Fatal(err)
				}
			}
			bob.waitFor("alice's two messages", func() bool { return len(bob.cached(conv)) == 2 })
			pendingForBob := func() int {
				p, err := srv.Node.Service().PendingFor(ctx, "bob")
				if err != nil {
					t.Fatal(err)
				}
				return len(p)
			}
			if tc.reply {
				time.Sleep(100 * time.Millisecond) // an ack frame, if one went, would be in by now
				if n := pendingForBob(); n != 1 {
					t.Fatalf("bob's pending rows before his reply: %d, want 1 (his ack waits for the delay)", n)
				}
				if _, err := bob.sess.Enqueue(ctx, conv, "three"); err != nil {
					t.Fatal(err)
				}
			}
			bob.waitFor("the server to take bob's ack", func() bool { return pendingForBob() == 0 })
		})
	}
}
