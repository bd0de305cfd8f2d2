package server_test

import (
	"context"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// A display name that reads like another user's id or name, whatever the
// case, the spaces at the ends or look-alike letters, is refused with
// confusable_name, at registration and on a rename; one's own is fine.
func TestConfusableNamesRefused(t *testing.T) {
	svc := newService(t, server.Config{SendRate: -1})
	registerAliceAndBob(t, svc)
	ctx := context.Background()
	for _, name := range []string{"Alice", "alice ", " ALICE", "\u0430lice", "Bob"} {
		name := name
		if _, err := svc.UpdateProfile(ctx, "bob", wire.ProfileUpdate{DisplayName: &name}); code(err) != wire.CodeConfusable && name != "Bob" {
			t.Errorf("bob renamed to %q: %v, want confusable_name", name, err)
		} else if name == "Bob" && err != nil {
			t.Errorf("bob renamed to his own %q: %v", name, err)
		}
		if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: "mallory", Password: "password-m", DisplayName: name}, ""); code(err) != wire.CodeConfusable {
			t.Errorf("mallory registered as %q: %v, want confusable_name", name, err)
		}
	}
	// An id that reads like a name taken is refused too.
	rob := "Robert"
	if _, err := svc.UpdateProfile(ctx, "bob", wire.ProfileUpdate{DisplayName: &rob}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: "robert", Password: "password-r"}, ""); code(err) != wire.CodeConfusable {
		t.Errorf("registering the id robert after bob took the name Robert: %v", err)
	}
	// bob gave up "Bob": someone else may have it now... but not as a name
	// that reads like bob's id, which he keeps.
	if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: "bobby", Password: "password-b", DisplayName: "BOB"}, ""); code(err) != wire.CodeConfusable {
		t.Errorf("BOB taken while bob's id stands: %v", err)
	}
	if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: "carol", Password: "password-c", DisplayName: "Carol Ann"}, ""); err != nil {
		t.Errorf("a plain new name: %v", err)
	}
	// Blank names are refused with their own code.
	blank := "\u3164"
	if _, err := svc.UpdateProfile(ctx, "carol", wire.ProfileUpdate{DisplayName: &blank}); code(err) != wire.CodeBlank {
		t.Errorf("a Hangul filler as a name: %v, want blank_text", err)
	}
	if _, err := svc.UpdateProfile(ctx, "carol", wire.ProfileUpdate{Status: &blank}); code(err) != wire.CodeBlank {
		t.Errorf("a Hangul filler as a status: %v, want blank_text", err)
	}
}

// Accounts made before name keys were kept get theirs from ClaimNameKeys
// (each node runs it at start): from then on they are protected too.
func TestClaimNameKeysOfOlderAccounts(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	if err := store.CreateUser(ctx, server.User{ID: "alice", DisplayName: "Alice", PasswordHash: []byte("h")}, server.Claim{}); err != nil {
		t.Fatal(err)
	}
	svc := serviceOn(t, store, server.Config{SendRate: -1})
	if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: "mallory", Password: "password-m", DisplayName: "\u0430lice"}, ""); err != nil {
		t.Fatalf("before the claim nothing holds alice's key: %v", err)
	}
	if err := svc.ClaimNameKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: "eve", Password: "password-e", DisplayName: "ALICE"}, ""); code(err) != wire.CodeConfusable {
		t.Fatalf("after the claim: %v, want confusable_name", err)
	}
}
