package client_test

import (
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
)

// A session with StreamPauses says when a stream of incoming messages has
// paused: a StreamPausedEvent after the stream's last message, so a UI
// that paces its frames can draw it at once. Without StreamPauses, none.
func TestStreamPauseIsTold(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			_, _, events := streamToBob(t, on)
			after := time.After(time.Second)
			for {
				select {
				case ev := <-events:
					if _, ok := ev.(client.StreamPausedEvent); ok {
						if !on {
							t.Fatal("a session without StreamPauses told a pause")
						}
						return
					}
				case <-after:
					if on {
						t.Fatal("no StreamPausedEvent within a second of the stream's last message")
					}
					return
				}
			}
		})
	}
}

// Frames that are not messages after a stream's last (in a group the
// members' boundaries come every few ms; here a typing note) do not hide
// its pause: only messages stop the timer.
func TestStreamPauseOutlastsOtherFrames(t *testing.T) {
	alice, conv, events := streamToBob(t, true)
	// The typing note reaches bob within the 15 ms of the pause, or just
	// after it: either way a pause is to be told.
	alice.sess.Typing(conv)
	after := time.After(2 * time.Second)
	typed := false
	for {
		select {
		case ev := <-events:
			switch ev.(type) {
			case client.StreamPausedEvent:
				return
			case client.TypingEvent:
				typed = true
			}
		case <-after:
			t.Fatalf("no StreamPausedEvent within 2 s of the stream's last message (a typing note came: %v)", typed)
		}
	}
}

// streamToBob streams 60 messages from alice to bob, 5 ms apart, bob's
// session reporting pauses or not, and reads bob's events until the last
// message's: what follows it is the caller's to read.
func streamToBob(t *testing.T, pauses bool) (alice *device, conv string, events <-chan client.Event) {
	t.Helper()
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv = direct(t, aliceAPI, "bob")
	alice = startDevice(t, aliceAPI, srv.URL, "alice")
	bob := newDevice(t, bobAPI, srv.URL, "bob", func(c *client.SessionConfig) { c.StreamPauses = pauses })
	events = bob.sess.Events()
	runSession(bob)
	waitConnected(alice, bob)
	ids := paced(t, alice.sess.API(), conv, 60, 5*time.Millisecond)
	last := ids[len(ids)-1]
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-events:
			seen = carries(ev, last)
		case <-deadline:
			t.Fatal("the stream's last message was not reported within 10 s")
		}
	}
	return alice, conv, events
}

// carries says whether ev reports the message with id.
func carries(ev client.Event, id string) bool {
	switch ev := ev.(type) {
	case client.MessageEvent:
		return ev.Message.MessageID == id
	case client.MessagesEvent:
		for _, m := range ev.Messages {
			if m.MessageID == id {
				return true
			}
		}
	}
	return false
}
