package roletest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// Revocations checks a server.Revocations: a revocation published by one node
// reaches every subscribed node, the publisher included, while they say they
// hear them, and none after a subscription's context ends. newPair returns
// the Revocations of two nodes on the same backend (in one process, the same
// value twice).
func Revocations(t *testing.T, newPair func(t *testing.T) (a, b server.Revocations)) {
	a, b := newPair(t)
	subscribe := func(r server.Revocations, c context.Context) chan server.Revocation {
		t.Helper()
		ch := make(chan server.Revocation, 16)
		if err := r.Subscribe(c, func(v server.Revocation) { ch <- v }); err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
		return ch
	}
	bctx, bcancel := context.WithCancel(t.Context())
	onA, onB := subscribe(a, t.Context()), subscribe(b, bctx)
	for i, r := range []server.Revocations{a, b} {
		if _, ok := r.Hearing(); !ok {
			t.Fatalf("node %d does not hear revocations with its subscription live", i)
		}
	}
	want := server.Revocation{TokenHashes: []string{"h1", "h2"}, UserIDs: []string{"ann"}, Conversations: []string{"g:crew"}}
	if err := a.Publish(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	for i, ch := range []chan server.Revocation{onA, onB} {
		select {
		case got := <-ch:
			if !slices.Equal(got.TokenHashes, want.TokenHashes) || !slices.Equal(got.UserIDs, want.UserIDs) ||
				!slices.Equal(got.Conversations, want.Conversations) {
				t.Errorf("node %d heard %+v, want %+v", i, got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("node %d did not hear the revocation within 5s", i)
		}
	}
	bcancel()
	time.Sleep(100 * time.Millisecond) // the subscription ends with its context
	if err := a.Publish(t.Context(), server.Revocation{TokenHashes: []string{"h3"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-onA:
	case <-time.After(5 * time.Second):
		t.Fatal("the publisher did not hear its own revocation")
	}
	select {
	case got := <-onB:
		t.Errorf("heard %+v after the subscription's context ended", got)
	case <-time.After(150 * time.Millisecond):
	}
}
