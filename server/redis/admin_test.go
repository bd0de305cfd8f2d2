package redis_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/wire"
)

// An admin on node-a disables bob, connected to node-b: bob's socket there
// closes at once with 4001 (log in again), his token is void, and he cannot
// log in while disabled.
func TestAdminEndsSessionsAcrossNodes(t *testing.T) {
	c := twoNodes(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, frames, readErr := c.bobOnB(ctx, t)
	yes := true
	var u wire.AdminUser
	if st := c.alice.do("PATCH", "/v1/admin/users/bob", wire.AdminUserChange{Disabled: &yes}, &u); st != http.StatusOK || !u.Disabled {
		t.Fatalf("disable bob: %d %+v", st, u)
	}
	deadline := time.After(10 * time.Second)
	for open := true; open; {
		select {
		case _, ok := <-frames:
			open = ok
		case <-deadline:
			t.Fatal("bob's socket on node-b is still open 10s after he was disabled on node-a")
		}
	}
	if code := websocket.CloseStatus(*readErr); code != 4001 {
		t.Fatalf("bob's socket closed with %d (%v), want 4001", code, *readErr)
	}
	// A disabled account's token is told so (account_disabled, 403), not
	// answered as unknown.
	if st := c.bob.do("GET", "/v1/me", nil, nil); st != http.StatusForbidden {
		t.Fatalf("bob's token after he was disabled: %d, want 403 (account_disabled)", st)
	}
	var auth wire.AuthResponse
	if st := c.bob.do("POST", "/v1/login", wire.LoginRequest{UserID: "bob", Password: "password-bob"}, &auth); st != http.StatusForbidden {
		t.Fatalf("a disabled bob logs in: %d, want 403", st)
	}
}
