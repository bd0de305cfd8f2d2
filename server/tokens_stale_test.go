package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/wire"
)

// TestTokenStaleOnlyWhileTheStoreIsOut: past the token cache's TTL a token
// is read from the store again; only while the store cannot answer is the
// cached one answered, however old, and never one this node heard revoked.
func TestTokenStaleOnlyWhileTheStoreIsOut(t *testing.T) {
	store := &tokenReads{Store: openStore(t)}
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	svc, err := server.New(server.Config{Backends: server.Backends{Store: store, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
		Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
		Registry: inmem.NewRegistry(), Broker: inmem.NewBroker(), Revocations: inmem.NewRevocations()},
		PasswordCost: 4, Registration: server.RegistrationOpen, TokenCacheTTL: time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	ctx := context.Background()
	registerAliceAndBob(t, svc)
	bob, alice := login(t, svc, "bob"), login(t, svc, "alice")
	for _, tok := range []string{bob, alice} {
		if _, err := svc.Authenticate(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Logout(ctx, "alice", alice); err != nil {
		t.Fatal(err)
	}
	now.Add(int64(time.Minute)) // far past the TTL

	reads := store.reads.Load()
	if u, err := svc.Authenticate(ctx, bob); err != nil || u != "bob" {
		t.Fatalf("Authenticate past the TTL: %q, %v", u, err)
	}
	if store.reads.Load() != reads+1 {
		t.Error("a token past the cache's TTL was not read from the store while it answers")
	}

	now.Add(int64(time.Minute))
	store.down.Store(true)
	if u, err := svc.Authenticate(ctx, bob); err != nil || u != "bob" {
		t.Fatalf("Authenticate past the TTL with the store out: %q, %v; want bob from the cache", u, err)
	}
	if _, err := svc.Authenticate(ctx, alice); err == nil || wire.AsError(err).Code != wire.CodeUnavailable {
		t.Errorf("a logged-out token with the store out: %v, want unavailable", err)
	}
	now.Add(int64(31 * 24 * time.Hour)) // past the token's own expiry (30 days)
	if _, err := svc.Authenticate(ctx, bob); err == nil {
		t.Error("an expired token was answered from the cache with the store out")
	}
}
