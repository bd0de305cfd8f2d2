package e2e

import (
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
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
	// A copy the redelivery read before the ack was applied may still come
	// (at-least-once), but nothing after: wait until the server shows the ack
	// and a ping's answer (queued behind such a copy in nearly every case),
	// then, over three grace periods, at most that one straggler.
	testenv.WaitFor(t, wait, func() bool { return alice.status(conv)["bob"].LastDeliveredSeq >= sent.SeqNo })
	ping := bws.id()
	bws.write(wire.Frame{Type: wire.TypePing, ID: ping})
	bws.next(func(f wire.Frame) bool { return f.Type == wire.TypePong && f.ID == ping })
	if n := bws.count(isMessage(conv), 3*time.Second); n > 1 {
		t.Fatalf("%d more copies after the ack was applied", n)
	}
}
