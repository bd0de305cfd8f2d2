package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// chat admin as the first account (the admin) of a server: list users,
// disable bob (his live session ends at once, he cannot log in), enable him,
// reset his password with a one-time code, grant and revoke admin, list and
// revoke invites; bob, no admin, is refused; the admin cannot lock
// themself out.
func TestAdmin(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")

	out := alice.must("", "admin", "users")
	if !strings.Contains(out, "alice") || !strings.Contains(out, "admin") || !strings.Contains(out, "bob") {
		t.Fatalf("admin users:\n%s", out)
	}
	if _, stderr, code := bob.run("", "admin", "users"); code == 0 || !strings.Contains(stderr, "only a server admin") {
		t.Fatalf("bob lists users: exit %d, %q", code, stderr)
	}

	// bob has a live session; disabling him ends it at once.
	store := localstore.MustOpen(t, localstore.Options{UserID: "bob"})
	sess := client.NewSession(client.SessionConfig{API: bob.api(), Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	waitState(t, sess, client.Connected)
	alice.must("", "admin", "disable", "bob")
	waitState(t, sess, client.Offline) // 4001: the token is refused, no reconnect
	if st := sess.State(); !st.LoggedOut || !st.Disabled || st.String() != "account disabled: ask your server's admin" {
		t.Fatalf("bob's live session after he was disabled: %+v (%q); want it told the account is disabled", st, st.String())
	}
	// His stored token, and his password, are answered account_disabled:
	// exit 3 (auth), one line saying whom to ask, not "log in again".
	const disabled = "account disabled: ask your server's admin\n"
	if _, stderr, code := bob.run("", "whoami"); code != 3 || stderr != "chat whoami: "+disabled {
		t.Fatalf("bob's stored token after he was disabled: exit %d, %q", code, stderr)
	}
	if _, stderr, code := bob.run("", "send", "--to", "alice", "hi"); code != 3 || stderr != "chat send: "+disabled {
		t.Fatalf("a disabled bob sends: exit %d, %q", code, stderr)
	}
	if _, stderr, code := bob.run(pw+"\n", "login", "bob", "--password-stdin"); code != 3 || stderr != "chat login: "+disabled {
		t.Fatalf("a disabled bob logs in: exit %d, %q", code, stderr)
	}
	var users wire.AdminUsersResponse
	if err := json.Unmarshal([]byte(alice.must("", "admin", "users", "--json")), &users); err != nil || len(users.Users) != 2 || !users.Users[1].Disabled {
		t.Fatalf("admin users --json: %+v, %v", users, err)
	}
	alice.must("", "admin", "enable", "bob")
	// Enabled again, he logs in afresh: the token kept while he was disabled
	// is gone.
	if _, stderr, code := bob.run("", "whoami"); code != 3 || !strings.Contains(stderr, "run chat login USER") {
		t.Fatalf("bob's old token after he was enabled again: exit %d, %q", code, stderr)
	}
	bob.must(pw+"\n", "login", "bob", "--password-stdin")

	// A password reset: a one-time code, bob's sessions end, the code works once.
	// Only the code on stdout (code=$(chat admin reset-password bob)), the
	// advice on stderr.
	out, stderr, c := alice.run("", "admin", "reset-password", "bob")
	code := strings.TrimSuffix(out, "\n")
	if c != 0 || len(code) < 20 || strings.ContainsAny(code, " \n") || !strings.Contains(stderr, "chat reset-password bob --code "+code) {
		t.Fatalf("admin reset-password: exit %d, stdout %q, stderr %q", c, out, stderr)
	}
	if _, _, c := bob.run("", "whoami"); c != 3 {
		t.Fatalf("bob's session survived the password reset: exit %d", c)
	}
	if out := bob.must("a new password 1\na new password 1\n", "reset-password", "bob", "--code", code, "--password-stdin"); !strings.Contains(out, "logged in") {
		t.Fatalf("reset-password: %q", out)
	}
	bob.must("a new password 1\n", "login", "bob", "--password-stdin")
	if _, stderr, c := bob.run("another one 12\n", "reset-password", "bob", "--code", code, "--password-stdin"); c == 0 || !strings.Contains(stderr, "wrong, used or expired") {
		t.Fatalf("a used code: exit %d, %q", c, stderr)
	}

	// Admin rights: granted, then taken; nobody drops their own.
	alice.must("", "admin", "grant", "bob")
	bob.must("", "admin", "users")
	if _, stderr, c := bob.run("", "admin", "revoke", "bob"); c == 0 || !strings.Contains(stderr, "cannot") {
		t.Fatalf("bob drops his own admin: exit %d, %q", c, stderr)
	}
	if _, stderr, c := alice.run("", "admin", "disable", "alice"); c == 0 || !strings.Contains(stderr, "cannot disable yourself") {
		t.Fatalf("alice disables herself: exit %d, %q", c, stderr)
	}
	alice.must("", "admin", "revoke", "bob")
	if _, _, c := bob.run("", "admin", "users"); c == 0 {
		t.Fatal("bob is still an admin after revoke")
	}

	// Invites: made, listed, revoked by the start of their id, then useless.
	invite := strings.TrimSpace(alice.must("", "invite"))
	var invs wire.InvitesResponse
	if err := json.Unmarshal([]byte(alice.must("", "admin", "invites", "--json")), &invs); err != nil || len(invs.Invites) != 1 {
		t.Fatalf("admin invites: %+v, %v", invs, err)
	}
	alice.must("", "admin", "revoke-invite", invs.Invites[0].ID[:12])
	carol := &user{t: t, name: "carol", srv: srv, home: t.TempDir()}
	if _, stderr, c := carol.run(pw+"\n", "register", "carol", "--invite", invite, "--password-stdin"); c == 0 || !strings.Contains(stderr, "invite") {
		t.Fatalf("register with a revoked invite: exit %d, %q", c, stderr)
	}
	if _, stderr, c := alice.run("", "admin", "disable", "nobody"); c == 0 || !strings.Contains(stderr, "nobody") {
		t.Fatalf("disable an unknown user: exit %d, %q", c, stderr)
	}
}

func waitState(t *testing.T, s *client.Session, want client.ConnStatus) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.State().Status != want {
		if time.Now().After(deadline) {
			t.Fatalf("session state %v, want %v", s.State().Status, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
