package client_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
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

// A resync frame (the server may have lost live copies to this connection)
// makes the device sync every conversation from its cursor: here the only
// way it gets a message whose live copy was lost and which the user's other
// device acked, so that no pending row is left to bring it.
func TestResyncFrameBringsWhatAnotherDeviceAcked(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	px := newProxy(t, hostport(t, srv.URL))
	var lost, inject atomic.Bool
	resync, err := wire.EncodeFrame(wire.Frame{Type: wire.TypeResync})
	if err != nil {
		t.Fatal(err)
	}
	px.mu.Lock()
	px.rewrite = func(frame []byte) [][]byte {
		switch {
		case !lost.Load() && bytes.Contains(frame, []byte(`"type":"message"`)) && bytes.Contains(frame, []byte("lost on the way")):
			lost.Store(true)
			return nil
		case bytes.Contains(frame, []byte(`"type":"pong"`)) && inject.CompareAndSwap(true, false):
			return [][]byte{frame, resync}
		}
		return [][]byte{frame}
	}
	px.mu.Unlock()
	bob1 := startDevice(t, bobAPI, px.URL(), "bob")
	bob2 := startDevice(t, bobAPI, srv.URL, "bob")
	// Both devices hold the conversation's first message: it has a cursor to
	// sync from (a device syncs the conversations it holds messages of).
	if _, err := alice.sess.Enqueue(bg, conv, "first"); err != nil {
		t.Fatal(err)
	}
	bob1.waitFor("the first message on bob's first device", func() bool { return len(bob1.cached(conv)) == 1 })
	if _, err := alice.sess.Enqueue(bg, conv, "lost on the way"); err != nil {
		t.Fatal(err)
	}
	bob2.waitFor("both messages on bob's second device", func() bool { return len(bob2.cached(conv)) == 2 })
	bob2.waitFor("bob's ack", func() bool {
		p, err := srv.Node.Service().PendingFor(bg, "bob")
		return err == nil && len(p) == 0
	})
	if !lost.Load() {
		t.Fatal("the proxy never saw the live copy to bob's first device")
	}
	time.Sleep(1500 * time.Millisecond) // past the server's redelivery grace (1 s here): nothing more comes
	if n := len(bob1.cached(conv)); n != 1 {
		t.Fatalf("bob's first device has %d messages before the resync, want 1", n)
	}
	inject.Store(true) // with the next pong (pings every second)
	bob1.waitFor("the lost message after the resync", func() bool { return len(bob1.cached(conv)) == 2 })
}
