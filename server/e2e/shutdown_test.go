package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
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

func TestLogoutClosesItsSockets(t *testing.T) {
	srv := servertest.Start(t)
	alice := register(t, srv, "alice")
	other := &api{t: t, base: srv.URL, user: "alice"}
	var login wire.AuthResponse
	other.do("POST", "/v1/login", wire.LoginRequest{UserID: "alice", Password: "password-alice"}, &login)
	other.token = login.Token
	revoked, kept := dial(t, alice), dial(t, other)
	if st := alice.do("POST", "/v1/logout", nil, nil); st != 204 {
		t.Fatalf("logout: %d", st)
	}
	for range revoked.frames {
	}
	var ce websocket.CloseError
	if !errors.As(revoked.err, &ce) || ce.Code != 4001 {
		t.Fatalf("socket of the revoked token closed with %v, want 4001", revoked.err)
	}
	// The other login's socket is untouched.
	kept.write(wire.Frame{Type: wire.TypePing, ID: "p"})
	kept.next(func(f wire.Frame) bool { return f.Type == wire.TypePong })
}
