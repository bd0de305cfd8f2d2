package e2e

import (
	"testing"
	"time"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// The delivery worker sends a message again to a connected recipient who has
// not acked it after the grace period (its copy may have been lost on the
// way); once acked, nothing more comes.
func TestUnackedMessageSentAgain(t *testing.T) {
	srv := servertest.Start(t) // RedeliverAfter: 1 s
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	bws := dial(t, bob)
	sent := alice.send(conv, "m1", "did you get this?")
	first := bws.next(isMessage(conv))
	if first.Message.SeqNo != sent.SeqNo {
		t.Fatalf("first copy %+v", first.Message)
	}
	// No ack: as if the copy had been lost. It comes again.
	again := bws.next(isMessage(conv))
	if again.Message.SeqNo != sent.SeqNo || again.Message.MessageID != "m1" {
		t.Fatalf("second copy %+v", again.Message)
	}
	bws.write(wire.Frame{Type: wire.TypeAck, ID: bws.id(), ConversationID: conv, SeqNo: sent.SeqNo})
	bws.quiet(isMessage(conv), 3*time.Second) // acked: no third copy
}
