package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server/servertest"
)

func TestShutdownClosesWithGoingAway(t *testing.T) {
	srv := servertest.Start(t)
	alice, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	ws := dial(t, alice)
	ws.sendWait(conv, "m1", "before shutdown")
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown hung")
	}
	// The reader sees the close frame with code 1001: reconnect with backoff.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		select {
		case _, ok := <-ws.frames:
			if ok {
				continue
			}
		case <-ctx.Done():
			t.Fatal("socket not closed")
		}
		break
	}
	var ce websocket.CloseError
	if err := ws.err; !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
		t.Fatalf("close = %v, want going away (1001)", ws.err)
	}
}
