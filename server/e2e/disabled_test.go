package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// A disabled account is told so: its token, on HTTP and on the WebSocket
// upgrade, and its password are answered 403 account_disabled — not
// "unknown or expired", which would send its client round a login loop.
// Enabled again, the old token is gone (401) and a login works.
func TestDisabledAccountIsToldSo(t *testing.T) {
	srv := servertest.Start(t)
	admin, bob := register(t, srv, "admin"), register(t, srv, "bob")
	ws := dial(t, bob)
	if st := admin.do("PATCH", "/v1/admin/users/bob", wire.AdminUserChange{Disabled: ptr(true)}, nil); st != http.StatusOK {
		t.Fatalf("disable bob: %d", st)
	}
	// His open socket is closed as a revoked token's is (4001).
	for range ws.frames {
	}
	if websocket.CloseStatus(ws.err) != 4001 {
		t.Fatalf("bob's socket after he was disabled ended with %v, want 4001", ws.err)
	}

	wantDisabled := func(what string, st int, e wire.ErrorResponse) {
		t.Helper()
		if st != http.StatusForbidden || e.Error == nil || e.Error.Code != wire.CodeAccountDisabled {
			t.Fatalf("%s of a disabled account: %d %+v, want 403 account_disabled", what, st, e.Error)
		}
	}
	var e wire.ErrorResponse
	wantDisabled("GET /v1/me with the token", bob.do("GET", "/v1/me", nil, &e), e)
	e = wire.ErrorResponse{}
	wantDisabled("login", bob.do("POST", "/v1/login", wire.LoginRequest{UserID: "bob", Password: "password-bob"}, &e), e)

	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/ws"
	_, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + bob.token}}})
	if err == nil || resp == nil {
		t.Fatalf("a disabled account's WebSocket upgrade: err %v, response %v", err, resp)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	e = wire.ErrorResponse{}
	if json.Unmarshal(body, &e) != nil {
		t.Fatalf("upgrade refused without a JSON error: %d %q", resp.StatusCode, body)
	}
	wantDisabled("WebSocket upgrade", resp.StatusCode, e)

	if st := admin.do("PATCH", "/v1/admin/users/bob", wire.AdminUserChange{Disabled: ptr(false)}, nil); st != http.StatusOK {
		t.Fatalf("enable bob: %d", st)
	}
	e = wire.ErrorResponse{}
	if st := bob.do("GET", "/v1/me", nil, &e); st != http.StatusUnauthorized || e.Error.Code != wire.CodeUnauthorized {
		t.Fatalf("bob's old token after he was enabled again: %d %+v, want 401 (log in afresh)", st, e.Error)
	}
	if st := bob.do("POST", "/v1/login", wire.LoginRequest{UserID: "bob", Password: "password-bob"}, nil); st != http.StatusOK {
		t.Fatalf("bob logs in after he was enabled again: %d", st)
	}
}

func ptr[T any](v T) *T { return &v }
