package server_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// tokenReads is a real store that counts its token reads and fails them while
// down is set, as a DynamoDB behind an open circuit does.
type tokenReads struct {
	*sqlite.Store
	reads atomic.Int64
	down  atomic.Bool
}

func (f *tokenReads) GetToken(ctx context.Context, hash string) (server.Token, error) {
	f.reads.Add(1)
	if f.down.Load() {
		return server.Token{}, fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	}
	return f.Store.GetToken(ctx, hash)
}

// cachingService is a one-node Service with the token cache on, as the
// embedded backend runs, over a store that counts token reads.
func cachingService(t *testing.T) (*server.Service, *tokenReads) {
	t.Helper()
	store := &tokenReads{Store: openStore(t)}
	svc, err := server.New(server.Config{Backends: server.Backends{Store: store, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
		Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
		Registry: inmem.NewRegistry(), Broker: inmem.NewBroker(), Revocations: inmem.NewRevocations()},
		PasswordCost: 4, Registration: server.RegistrationOpen, TokenCacheTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	return svc, store
}

func login(t *testing.T, svc *server.Service, user string) string {
	t.Helper()
	a, err := svc.Login(context.Background(), wire.LoginRequest{UserID: user, Password: "password-" + user}, "")
	if err != nil {
		t.Fatal(err)
	}
	return a.Token
}

func TestTokenCachedThroughStoreFault(t *testing.T) {
	svc, store := cachingService(t)
	ctx := context.Background()
	registerAliceAndBob(t, svc)
	tok := login(t, svc, "bob")
	for range 3 {
		if u, err := svc.Authenticate(ctx, tok); err != nil || u != "bob" {
			t.Fatalf("Authenticate: %q, %v", u, err)
		}
	}
	if n := store.reads.Load(); n != 1 {
		t.Errorf("3 requests read the token %d times, want 1", n)
	}
	store.down.Store(true)
	if u, err := svc.Authenticate(ctx, tok); err != nil || u != "bob" {
		t.Fatalf("Authenticate with the store down: %q, %v; want bob from the cache", u, err)
	}
	if _, err := svc.Authenticate(ctx, login(t, svc, "alice")); err == nil {
		t.Error("a token never cached was accepted with the store down")
	}
}

func TestTokenRevokedAtOnce(t *testing.T) {
	svc, _ := cachingService(t)
	ctx := context.Background()
	registerAliceAndBob(t, svc)
	unauthorized := func(what, tok string) {
		t.Helper()
		if _, err := svc.Authenticate(ctx, tok); err == nil || wire.AsError(err).Code != wire.CodeUnauthorized {
			t.Errorf("%s: Authenticate = %v, want unauthorized", what, err)
		}
	}
	tok := login(t, svc, "bob")
	svc.Authenticate(ctx, tok)
	if err := svc.Logout(ctx, "bob", tok); err != nil {
		t.Fatal(err)
	}
	unauthorized("after logout", tok)

	tok = login(t, svc, "bob")
	svc.Authenticate(ctx, tok)
	if err := svc.AdminRevokeSessions(ctx, "alice", "bob"); err != nil {
		t.Fatal(err)
	}
	unauthorized("after an admin ended the sessions", tok)

	tok = login(t, svc, "bob")
	svc.Authenticate(ctx, tok)
	if _, err := svc.AdminResetPassword(ctx, "alice", "bob"); err != nil {
		t.Fatal(err)
	}
	unauthorized("after an admin password reset", tok)
}
