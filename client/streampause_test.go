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
			srv := servertest.Start(t)
			aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
			conv := direct(t, aliceAPI, "bob")
			alice := startDevice(t, aliceAPI, srv.URL, "alice")
			bob := newDevice(t, bobAPI, srv.URL, "bob", func(c *client.SessionConfig) { c.StreamPauses = on })
			events := bob.sess.Events()
			runSession(bob)
			waitConnected(alice, bob)
			const n = 60
			ids := paced(t, alice.sess.API(), conv, n, 5*time.Millisecond)
			last := ids[len(ids)-1]
			// Read the events until the last message's, then what follows it.
			deadline := time.After(10 * time.Second)
			for seen := false; !seen; {
				select {
				case ev := <-events:
					seen = carries(ev, last)
				case <-deadline:
					t.Fatal("the stream's last message was not reported within 10 s")
				}
			}
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
