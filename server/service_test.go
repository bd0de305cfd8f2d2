package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

func newService(t *testing.T, cfg server.Config) *server.Service {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "chat.db"), sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg.Backends = server.Backends{Store: store, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
		Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
		Registry: inmem.NewRegistry(), Broker: inmem.NewBroker()}
	cfg.PasswordCost = 4
	cfg.Registration = server.RegistrationOpen
	svc, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	return svc
}

func TestOverloadedWhenTooManyInFlight(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, server.Config{MaxInFlight: 1, SendRate: -1})
	for _, u := range []string{"alice", "bob"} {
		if _, err := svc.Register(ctx, wire.RegisterRequest{UserID: u, Password: "password-" + u}); err != nil {
			t.Fatal(err)
		}
	}
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	unlock := svc.LockConversation(conv)
	first := make(chan error, 1)
	go func() {
		_, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "held", Content: "waits for the lock"}, nil)
		first <- err
	}()
	// The first send is admitted and waits on the lock; the second is refused at once.
	deadline := time.Now().Add(5 * time.Second)
	for svc.InFlight() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("first send was never admitted")
		}
		time.Sleep(time.Millisecond)
	}
	_, _, err := svc.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "second", Content: "too many"}, nil)
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeOverloaded || we.RetryAfterMs <= 0 {
		t.Fatalf("second send: %v, want overloaded with a retry hint", err)
	}
	unlock()
	if err := <-first; err != nil {
		t.Fatalf("first send: %v", err)
	}
	// Capacity is back once the first is answered.
	if _, _, err := svc.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "third", Content: "now fine"}, nil); err != nil {
		t.Fatalf("after the first finished: %v", err)
	}
}
