package roletest

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// Lagging is a Registry whose Add and Remove reach Nodes, LastSeen and
// DropNode after a lag (a queue in front of the store, server/kafka): the
// contract is then that they do within the lag, not at once. Settle waits
// until every change made so far has been applied.
type Lagging interface {
	Settle(ctx context.Context) error
}

// settle waits for a Lagging registry; others need no wait.
func settle(t *testing.T, r server.Registry) {
	t.Helper()
	if l, ok := r.(Lagging); ok {
		if err := l.Settle(ctx(t)); err != nil {
			t.Fatalf("Settle: %v", err)
		}
	}
}

// Registry checks a server.Registry. A Lagging one is settled before each
// read and DropNode.
func Registry(t *testing.T, newReg func(t *testing.T) server.Registry) {
	nodes := func(t *testing.T, r server.Registry, users []string, want map[string][]string) {
		t.Helper()
		settle(t, r)
		got, err := r.Nodes(ctx(t), users)
		if err != nil {
			t.Fatal(err)
		}
		for u, ns := range got {
			ns = slices.Clone(ns)
			slices.Sort(ns)
			got[u] = ns
		}
		for _, ns := range want {
			slices.Sort(ns)
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("Nodes = %v, want %v", got, want)
		}
	}
	add := func(t *testing.T, r server.Registry, ps ...server.Presence) {
		t.Helper()
		for _, p := range ps {
			if err := r.Add(ctx(t), p); err != nil {
				t.Fatalf("Add(%+v): %v", p, err)
			}
		}
	}

	t.Run("OK", func(t *testing.T) {
		r, c := newReg(t), ctx(t)
		ann, bob, cat := id(t, "ann"), id(t, "bob"), id(t, "cat")
		n1, n2 := id(t, "n1"), id(t, "n2")
		add(t, r,
			server.Presence{UserID: ann, ConnID: "c1", NodeID: n1},
			server.Presence{UserID: ann, ConnID: "c2", NodeID: n2},
			server.Presence{UserID: ann, ConnID: "c3", NodeID: n2}, // two terminals on one node
			server.Presence{UserID: bob, ConnID: "c1", NodeID: n1},
		)
		all := []string{ann, bob, cat}
		nodes(t, r, all, map[string][]string{ann: {n1, n2}, bob: {n1}})
		if err := r.Remove(c, server.Presence{UserID: ann, ConnID: "c2", NodeID: n2}); err != nil {
			t.Fatal(err)
		}
		nodes(t, r, all, map[string][]string{ann: {n1, n2}, bob: {n1}})
		if err := r.Remove(c, server.Presence{UserID: ann, ConnID: "c3", NodeID: n2}); err != nil {
			t.Fatal(err)
		}
		nodes(t, r, all, map[string][]string{ann: {n1}, bob: {n1}})
		if err := r.Remove(c, server.Presence{UserID: bob, ConnID: "c1", NodeID: n1}); err != nil {
			t.Fatal(err)
		}
		nodes(t, r, all, map[string][]string{ann: {n1}})
		// Removing an unknown connection is not an error.
		if err := r.Remove(c, server.Presence{UserID: cat, ConnID: "c9", NodeID: n1}); err != nil {
			t.Fatal(err)
		}
		nodes(t, r, nil, map[string][]string{})
	})
	t.Run("DropNode", func(t *testing.T) {
		r, c := newReg(t), ctx(t)
		ann, bob, cat := id(t, "ann"), id(t, "bob"), id(t, "cat")
		n1, n2 := id(t, "n1"), id(t, "n2")
		add(t, r,
			server.Presence{UserID: ann, ConnID: "c1", NodeID: n1},
			server.Presence{UserID: ann, ConnID: "c2", NodeID: n2},
			server.Presence{UserID: bob, ConnID: "c1", NodeID: n1},
			server.Presence{UserID: bob, ConnID: "c2", NodeID: n1},
			server.Presence{UserID: cat, ConnID: "c1", NodeID: n2},
		)
		settle(t, r)
		if err := r.DropNode(c, n1); err != nil {
			t.Fatal(err)
		}
		nodes(t, r, []string{ann, bob, cat}, map[string][]string{ann: {n2}, cat: {n2}})
		// The node can come back and register again.
		add(t, r, server.Presence{UserID: bob, ConnID: "c3", NodeID: n1})
		nodes(t, r, []string{ann, bob, cat}, map[string][]string{ann: {n2}, bob: {n1}, cat: {n2}})
		if err := r.DropNode(c, id(t, "never-seen")); err != nil {
			t.Fatalf("DropNode of an unknown node: %v", err)
		}
	})
	t.Run("ErrEmptyField", func(t *testing.T) {
		r, c := newReg(t), ctx(t)
		u := id(t, "u")
		for _, p := range []server.Presence{
			{ConnID: "c", NodeID: "n"},
			{UserID: u, NodeID: "n"},
			{UserID: u, ConnID: "c"},
		} {
			if err := r.Add(c, p); err == nil {
				t.Errorf("Add(%+v) succeeded", p)
			}
		}
		nodes(t, r, []string{u}, map[string][]string{})
	})
	// "Last seen" is when a user's connection last went away, by Remove or
	// with its node; a user never seen leaving is absent.
	t.Run("LastSeen", func(t *testing.T) {
		r, c := newReg(t), ctx(t)
		ann, bob, cat := id(t, "ann"), id(t, "bob"), id(t, "cat")
		n1, n2 := id(t, "n1"), id(t, "n2")
		add(t, r,
			server.Presence{UserID: ann, ConnID: "c1", NodeID: n1},
			server.Presence{UserID: bob, ConnID: "c1", NodeID: n2},
			server.Presence{UserID: cat, ConnID: "c1", NodeID: n1},
		)
		settle(t, r)
		seen, err := r.LastSeen(c, []string{ann, bob, cat})
		if err != nil || len(seen) != 0 {
			t.Fatalf("LastSeen before anyone left = %v, %v; want none", seen, err)
		}
		before := time.Now().Add(-time.Second) // Redis stores milliseconds
		if err := r.Remove(c, server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}); err != nil {
			t.Fatal(err)
		}
		settle(t, r)
		if err := r.DropNode(c, n2); err != nil {
			t.Fatal(err)
		}
		after := time.Now().Add(time.Second)
		seen, err = r.LastSeen(c, []string{ann, bob, cat})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{ann, bob} {
			if at, ok := seen[u]; !ok || at.Before(before) || at.After(after) {
				t.Errorf("LastSeen[%s] = %v (present %v), want a time between %v and %v", u, at, ok, before, after)
			}
		}
		if at, ok := seen[cat]; ok {
			t.Errorf("LastSeen[cat] = %v: cat is still connected and never left", at)
		}
	})
}
