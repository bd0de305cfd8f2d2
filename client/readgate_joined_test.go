package client

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// The frames of one WebSocket message (the server joins what it has queued)
// are read already: the reader hands them over without waiting for the
// serve loop's decision on the first, so they make one batch. A frame with
// nothing behind it in the message still waits for the decision.
func TestJoinedFramesAreHandedOverAtOnce(t *testing.T) {
	g := &readGate{armed: true}
	frames := make(chan wire.Frame, 8)
	// A generous deadline only ends a handOver that waits for a decision
	// nobody makes: returning false is the failure.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 3 {
		if !handOver(ctx, frames, wire.Frame{Type: wire.TypeMessage}, g, true) {
			t.Fatalf("frame %d of a joined message waited for the serve loop's decision", i)
		}
		<-frames // the queue empty again, as the serve loop leaves it
	}

	waiting, stop := context.WithCancel(context.Background())
	defer stop()
	returned := make(chan bool, 1)
	go func() { returned <- handOver(waiting, frames, wire.Frame{Type: wire.TypeMessage}, g, false) }()
	<-frames
	select {
	case <-returned:
		t.Fatal("a frame with nothing behind it did not wait for the serve loop's decision")
	default:
	}
	g.decided()
	if !<-returned {
		t.Fatal("handOver ended without the decision")
	}
}

// Buffered says whether Read has frames of the last message left.
func TestConnBufferedCountsFramesLeft(t *testing.T) {
	c := &Conn{rest: []byte("{\"type\":\"ping\"}\n{\"type\":\"ping\"}\n\n")}
	for i, want := range []bool{true, true, false} {
		if got := c.Buffered(); got != want {
			t.Fatalf("before read %d: Buffered() = %v, want %v", i, got, want)
		}
		if !want {
			break
		}
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
