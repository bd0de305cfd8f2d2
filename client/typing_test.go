package client_test

import (
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
)

func (d *device) typingEvents() []client.TypingEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []client.TypingEvent
	for _, ev := range d.events {
		if e, ok := ev.(client.TypingEvent); ok {
			out = append(out, e)
		}
	}
	return out
}

// Typing on every keystroke sends one frame per TypingEvery; the peer's
// session reports it as a TypingEvent naming the typist, and the typist's own
// session reports nothing.
func TestTypingReachesThePeerOncePerInterval(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	bob := startDevice(t, bobAPI, srv.URL, "bob")
	for _, d := range []*device{alice, bob} {
		d.waitFor("connected", func() bool { return d.sess.State().Status == client.Connected })
	}
	for range 10 { // ten keystrokes
		alice.sess.Typing(conv)
	}
	bob.waitFor("alice's typing", func() bool { return len(bob.typingEvents()) > 0 })
	time.Sleep(500 * time.Millisecond) // anything else the keystrokes sent arrives by now
	got := bob.typingEvents()
	if len(got) != 1 || got[0].UserID != "alice" || got[0].ConversationID != conv {
		t.Fatalf("bob's typing events = %+v, want one from alice in %s", got, conv)
	}
	if n := len(alice.typingEvents()); n != 0 {
		t.Fatalf("alice's own session reported %d typing events", n)
	}
}
