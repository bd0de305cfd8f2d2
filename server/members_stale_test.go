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

// participantReads is the SQLite store with its participant lists made to
// fail (down) as DynamoDB's do in an outage, and a hook run inside a read.
type participantReads struct {
	*sqlite.Store
	down   atomic.Bool
	during atomic.Pointer[func()]
}

func (f *participantReads) ListParticipants(ctx context.Context, convID string) ([]server.Participant, error) {
	if f.down.Load() {
		return nil, fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
	}
	ps, err := f.Store.ListParticipants(ctx, convID)
	if h := f.during.Load(); h != nil {
		(*h)()
	}
	return ps, err
}

// TestStaleMembersOnlyIfNoChangeWasHeard: past the member cache's TTL (5 s)
// with the store out, a group's members are answered from the list a node
// read, but not from one during whose read the node heard a revocation: the
// list may predate a removal the revocation was of.
func TestStaleMembersOnlyIfNoChangeWasHeard(t *testing.T) {
	store := &participantReads{Store: openStore(t)}
	rev := inmem.NewRevocations()
	svc, err := server.New(server.Config{Backends: server.Backends{Store: store, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
		Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
		Registry: inmem.NewRegistry(), Broker: inmem.NewBroker(), Revocations: rev},
		PasswordCost: 4, Registration: server.RegistrationOpen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	ctx := context.Background()
	registerAliceAndBob(t, svc)
	group := func(name string) string {
		c, _, err := svc.CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Group, Name: name, Members: []string{"bob"}})
		if err != nil {
			t.Fatal(err)
		}
		return c.ConversationID
	}
	clean, raced := group("clean"), group("raced")
	if _, err := svc.Presence(ctx, "alice", clean); err != nil {
		t.Fatal(err)
	}
	heard := func() {
		if err := rev.Publish(ctx, server.Revocation{Conversations: []string{"g:another"}}); err != nil {
			t.Error(err)
		}
	}
	store.during.Store(&heard)
	if _, err := svc.Presence(ctx, "alice", raced); err != nil {
		t.Fatal(err)
	}
	store.during.Store(nil)

	time.Sleep(5*time.Second + 200*time.Millisecond) // past the member cache's TTL
	store.down.Store(true)
	if p, err := svc.Presence(ctx, "alice", clean); err != nil || len(p.Members) != 1 || p.Members[0].UserID != "bob" {
		t.Errorf("presence in a group whose members were read cleanly, store out: %+v, %v; want bob's", p, err)
	}
	if _, err := svc.Presence(ctx, "alice", raced); wire.AsError(err).Code != wire.CodeUnavailable {
		t.Errorf("presence in a group whose members were read across a revocation, store out: %v; want unavailable", err)
	}
}
