package tui

import (
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

func boundaryMove(user string, seq int64) client.StatusEvent {
	return client.StatusEvent{ConversationID: "g1", Status: wire.MemberStatus{UserID: user, LastDeliveredSeq: seq}}
}

// Members' boundary moves that come one after another reach the model as
// one Update, not one each; the message that follows them ends the wait and
// comes in the same batch.
func TestBoundaryMovesComeInOneUpdate(t *testing.T) {
	ch := make(chan client.Event) // each send waits for the pump to take it
	got := make(chan any, 1)
	go func() { got <- waitEvent(ch, time.Hour)() }()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for _, u := range []string{"bob", "carol", "dave", "erin"} {
			select {
			case ch <- boundaryMove(u, 1):
			case <-done:
				return
			}
		}
		select {
		case ch <- client.MessageEvent{Message: wire.Message{ConversationID: "g1", SeqNo: 2, MessageID: "m2", SenderID: "bob"}}:
		case <-done:
		}
	}()
	batch, ok := (<-got).(eventBatchMsg)
	if !ok || len(batch) != 5 || !isMessage(batch[4], "m2") {
		t.Fatalf("got %#v, want the four boundary moves and the message in one batch", batch)
	}
}

// A message is never held for boundary moves: alone, it comes at once.
func TestMessageIsNotHeld(t *testing.T) {
	ch := make(chan client.Event, 1)
	msg := client.MessageEvent{Message: wire.Message{ConversationID: "g1", SeqNo: 2, MessageID: "m2", SenderID: "bob"}}
	ch <- msg
	if got := waitEvent(ch, time.Hour)(); !isMessage(got, "m2") { // held, this would wait an hour
		t.Fatalf("got %#v, want the message", got)
	}
}

// Boundary moves with nothing after them come when the hold ends.
func TestBoundaryMovesComeAfterTheHold(t *testing.T) {
	ch := make(chan client.Event, 2)
	ch <- boundaryMove("bob", 1)
	ch <- boundaryMove("carol", 1)
	batch, ok := waitEvent(ch, 10*time.Millisecond)().(eventBatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("got %#v, want both boundary moves", batch)
	}
}

func isMessage(x any, id string) bool {
	ev, ok := x.(client.MessageEvent)
	return ok && ev.Message.MessageID == id
}
