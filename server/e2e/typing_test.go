package e2e

import (
	"testing"
	"time"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func isTyping(conv, user string) func(wire.Frame) bool {
	return func(f wire.Frame) bool {
		return f.Type == wire.TypeTyping && f.ConversationID == conv && f.UserID == user
	}
}

// A typing frame reaches the other members' devices, named by the server (a
// user_id the client put in is ignored), and nobody else: not the typist's own
// other device, not an outsider, and nothing from an outsider. It is never
// stored or answered, and a typist sending many is passed on at most a few
// times a second.
func TestTypingReachesOtherMembersOnly(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	conv := alice.direct("bob")
	a1, a2, b, c := dial(t, alice), dial(t, alice), dial(t, bob), dial(t, carol)

	a1.write(wire.Frame{Type: wire.TypeTyping, ConversationID: conv, UserID: "carol"})
	b.next(isTyping(conv, "alice"))
	a1.quiet(func(f wire.Frame) bool { return f.Type != wire.TypePong }, 300*time.Millisecond) // no answer
	a2.quiet(func(f wire.Frame) bool { return f.Type == wire.TypeTyping }, 100*time.Millisecond)
	c.quiet(func(f wire.Frame) bool { return f.Type == wire.TypeTyping }, 100*time.Millisecond)

	// An outsider's typing goes nowhere, and is not answered either.
	c.write(wire.Frame{Type: wire.TypeTyping, ConversationID: conv})
	b.quiet(func(f wire.Frame) bool { return f.Type == wire.TypeTyping }, 300*time.Millisecond)
	c.quiet(func(f wire.Frame) bool { return f.Type != wire.TypePong }, 100*time.Millisecond)

	// Never stored: no message, no seq_no taken.
	if h := bob.history(conv, 0, 10); len(h.Messages) != 0 {
		t.Fatalf("typing left messages in the history: %+v", h.Messages)
	}
	if got := a1.sendWait(conv, "m1", "first real message"); got.SeqNo != 1 {
		t.Fatalf("the first message after typing got seq_no %d, want 1", got.SeqNo)
	}

	// A burst is thinned to the limit (two a second).
	time.Sleep(1100 * time.Millisecond) // a fresh rate window
	for range 20 {
		a1.write(wire.Frame{Type: wire.TypeTyping, ConversationID: conv})
	}
	if n := b.count(isTyping(conv, "alice"), 1500*time.Millisecond); n < 1 || n > 4 {
		t.Fatalf("bob got %d typing frames of a burst of 20 within 1.5 s, want 1 to 4", n)
	}
}
