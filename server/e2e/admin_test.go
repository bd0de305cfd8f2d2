package e2e

import (
	"net/http"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// An admin's password reset (the password is thought known to someone else)
// voids the old password at once, not when the user redeems the code: until
// then nobody can log in as them, and the code sets a password that works.
func TestAdminResetVoidsOldPassword(t *testing.T) {
	srv := servertest.Start(t)
	admin, bob := register(t, srv, "admin"), register(t, srv, "bob")
	login := func(password string) int {
		t.Helper()
		a := &api{t: t, base: srv.URL}
		var e wire.ErrorResponse
		return a.do("POST", "/v1/login", wire.LoginRequest{UserID: "bob", Password: password}, &e)
	}
	if st := login("password-bob"); st != http.StatusOK {
		t.Fatalf("login before the reset: %d", st)
	}
	var code wire.PasswordResetCode
	if st := admin.do("POST", "/v1/admin/users/bob/password-reset", nil, &code); st != http.StatusOK && st != http.StatusCreated || code.Code == "" {
		t.Fatalf("reset: status %d, %+v", st, code)
	}
	if st := login("password-bob"); st != http.StatusUnauthorized {
		t.Fatalf("the old password after an admin reset: status %d, want 401", st)
	}
	var me wire.Profile
	if st := bob.do("GET", "/v1/me", nil, &me); st != http.StatusUnauthorized {
		t.Fatalf("bob's old session after the reset: status %d, want 401", st)
	}
	var auth wire.AuthResponse
	a := &api{t: t, base: srv.URL}
	if st := a.do("POST", "/v1/password-reset", wire.PasswordResetRequest{UserID: "bob", Code: code.Code, Password: "a-new-password"}, &auth); st != http.StatusOK || auth.Token == "" {
		t.Fatalf("redeem the code: status %d", st)
	}
	if st := login("a-new-password"); st != http.StatusOK {
		t.Fatalf("the new password: status %d", st)
	}
	if st := login("password-bob"); st != http.StatusUnauthorized {
		t.Fatalf("the old password after the new one is set: status %d", st)
	}
}
