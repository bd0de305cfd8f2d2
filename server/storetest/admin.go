package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

func ptr[T any](v T) *T { return &v }

// What an admin does: list users, disable one, grant admin, set a reset code
// and a new password, end every session of a user, list and revoke invites.
func testAdministration(t *testing.T, s server.Store) {
	ctx := context.Background()
	for i, id := range []string{"carol", "alice", "bob"} {
		must(t, s.CreateUser(ctx, user(id), server.Claim{First: i == 0, Now: t0}))
	}
	users, err := s.ListUsers(ctx)
	must(t, err)
	if len(users) != 3 || users[0].ID != "alice" || users[2].ID != "carol" || users[0].Disabled {
		t.Fatalf("ListUsers: %+v", users)
	}

	exp := t0.Add(24 * time.Hour)
	// An admin's reset sets the code and voids the old password in one write.
	u, err := s.UpdateProfile(ctx, "bob", server.ProfileChange{Disabled: ptr(true), Admin: ptr(true),
		PasswordHash: []byte("void-hash"), ResetHash: ptr("reset-hash"), ResetExpires: &exp})
	must(t, err)
	if !u.Disabled || !u.Admin || u.ResetHash != "reset-hash" || !u.ResetExpires.Equal(exp) || u.DisplayName != "User bob" ||
		string(u.PasswordHash) != "void-hash" {
		t.Fatalf("after an admin change: %+v", u)
	}
	u, err = s.UpdateProfile(ctx, "bob", server.ProfileChange{Disabled: ptr(false), PasswordHash: []byte("new-hash"), ResetHash: ptr("")})
	must(t, err)
	if got, _ := s.GetUser(ctx, "bob"); got.Disabled || string(got.PasswordHash) != "new-hash" || got.ResetHash != "" || !got.Admin {
		t.Fatalf("after enable and a new password: %+v (returned %+v)", got, u)
	}
	_, err = s.UpdateProfile(ctx, "nobody", server.ProfileChange{Disabled: ptr(true)})
	wantErr(t, err, server.ErrNotFound)

	// Every session of bob ends; alice's stay.
	far := time.Now().Add(time.Hour)
	for _, tok := range []server.Token{{Hash: "b1", UserID: "bob", ExpiresAt: far}, {Hash: "b2", UserID: "bob", ExpiresAt: far}, {Hash: "a1", UserID: "alice", ExpiresAt: far}} {
		must(t, s.PutToken(ctx, tok))
	}
	// Disabling bob keeps his tokens, marked, so they are answered
	// account_disabled; alice's are untouched; a token made afterwards is not.
	must(t, s.DisableUserTokens(ctx, "bob"))
	for _, h := range []string{"b1", "b2"} {
		tok, err := s.GetToken(ctx, h)
		if err != nil || !tok.Disabled || tok.UserID != "bob" {
			t.Fatalf("bob's token %s after DisableUserTokens: %+v, %v; want it kept, disabled", h, tok, err)
		}
	}
	if tok, err := s.GetToken(ctx, "a1"); err != nil || tok.Disabled {
		t.Fatalf("alice's token after bob's were disabled: %+v, %v", tok, err)
	}
	must(t, s.PutToken(ctx, server.Token{Hash: "b3", UserID: "bob", ExpiresAt: far}))
	if tok, err := s.GetToken(ctx, "b3"); err != nil || tok.Disabled {
		t.Fatalf("a token put after DisableUserTokens: %+v, %v; want it enabled", tok, err)
	}
	must(t, s.DisableUserTokens(ctx, "nobody"))
	must(t, s.DeleteUserTokens(ctx, "bob"))
	for _, h := range []string{"b1", "b2", "b3"} {
		_, err := s.GetToken(ctx, h)
		wantErr(t, err, server.ErrNotFound)
	}
	if _, err := s.GetToken(ctx, "a1"); err != nil {
		t.Fatalf("alice's session ended with bob's: %v", err)
	}

	// Invites: listed newest first while unexpired; a revoked one is gone.
	now := time.Now()
	must(t, s.PutInvite(ctx, server.Invite{Hash: "i1", CreatedBy: "carol", ExpiresAt: now.Add(time.Hour)}))
	must(t, s.PutInvite(ctx, server.Invite{Hash: "i2", CreatedBy: "carol", ExpiresAt: now.Add(2 * time.Hour)}))
	must(t, s.PutInvite(ctx, server.Invite{Hash: "old", CreatedBy: "carol", ExpiresAt: now.Add(-time.Hour)}))
	invs, err := s.ListInvites(ctx)
	must(t, err)
	if len(invs) != 2 || invs[0].Hash != "i2" || invs[1].Hash != "i1" || invs[0].CreatedBy != "carol" {
		t.Fatalf("ListInvites: %+v", invs)
	}
	must(t, s.DeleteInvite(ctx, "i2"))
	wantErr(t, s.DeleteInvite(ctx, "i2"), server.ErrNotFound)
	wantErr(t, s.CreateUser(ctx, user("dave"), server.Claim{InviteHash: "i2", Now: now}), server.ErrBadInvite)
}
