package roletest

import (
	"maps"
	"slices"
	"testing"

	"github.com/chatterm/chat/server"
)

// VersionedRegistry checks a server.VersionedRegistry's Apply: changes applied
// out of order or again leave what the newest change of each connection says.
func VersionedRegistry(t *testing.T, newReg func(t *testing.T) server.VersionedRegistry) {
	nodes := func(t *testing.T, r server.Registry, users []string, want map[string][]string) {
		t.Helper()
		got, err := r.Nodes(ctx(t), users)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("Nodes = %v, want %v", got, want)
		}
	}
	apply := func(t *testing.T, r server.VersionedRegistry, cs ...server.PresenceChange) {
		t.Helper()
		if err := r.Apply(ctx(t), cs); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	t.Run("OK", func(t *testing.T) {
		r := newReg(t)
		ann, n1 := id(t, "ann"), id(t, "n1")
		c1 := server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}
		apply(t, r, server.PresenceChange{Presence: c1, Version: 10})
		nodes(t, r, []string{ann}, map[string][]string{ann: {n1}})
		apply(t, r, server.PresenceChange{Presence: c1, Gone: true, Version: 11})
		nodes(t, r, []string{ann}, map[string][]string{})
		if seen, err := r.LastSeen(ctx(t), []string{ann}); err != nil || seen[ann].IsZero() {
			t.Fatalf("LastSeen after an applied Remove = %v, %v; want a time", seen, err)
		}
	})
	// A replayed or late Add cannot bring back a connection whose Remove was
	// applied: the queue may hand a change again after a worker crash.
	t.Run("ReplayedAddAfterRemove", func(t *testing.T) {
		r := newReg(t)
		ann, n1 := id(t, "ann"), id(t, "n1")
		c1 := server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}
		add, remove := server.PresenceChange{Presence: c1, Version: 10}, server.PresenceChange{Presence: c1, Gone: true, Version: 11}
		apply(t, r, add, remove, add)
		nodes(t, r, []string{ann}, map[string][]string{})
		apply(t, r, add)
		nodes(t, r, []string{ann}, map[string][]string{})
	})
	// Out of order: the Remove first, then its Add; and an old Remove after a
	// newer Add of the same connection leaves it.
	t.Run("Reordered", func(t *testing.T) {
		r := newReg(t)
		ann, bob, n1 := id(t, "ann"), id(t, "bob"), id(t, "n1")
		a := server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}
		b := server.Presence{UserID: bob, ConnID: "c1", NodeID: n1}
		apply(t, r,
			server.PresenceChange{Presence: a, Gone: true, Version: 11},
			server.PresenceChange{Presence: a, Version: 10},
			server.PresenceChange{Presence: b, Version: 20},
			server.PresenceChange{Presence: b, Gone: true, Version: 19},
		)
		nodes(t, r, []string{ann, bob}, map[string][]string{bob: {n1}})
	})
	// Versions are per connection: another connection of the user with a
	// lower version (another node's numbering) is applied.
	t.Run("PerConnection", func(t *testing.T) {
		r := newReg(t)
		ann, n1, n2 := id(t, "ann"), id(t, "n1"), id(t, "n2")
		apply(t, r,
			server.PresenceChange{Presence: server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}, Version: 500},
			server.PresenceChange{Presence: server.Presence{UserID: ann, ConnID: "c2", NodeID: n2}, Version: 7},
		)
		want := []string{n1, n2}
		slices.Sort(want)
		got, err := r.Nodes(ctx(t), []string{ann})
		if err != nil {
			t.Fatal(err)
		}
		gotAnn := slices.Clone(got[ann])
		slices.Sort(gotAnn)
		if !slices.Equal(gotAnn, want) {
			t.Fatalf("Nodes[ann] = %v, want %v", gotAnn, want)
		}
		// DropNode still finds connections that came through Apply.
		if err := r.DropNode(ctx(t), n1); err != nil {
			t.Fatal(err)
		}
		nodes(t, r, []string{ann}, map[string][]string{ann: {n2}})
	})
	// Versions as large as a node gives them (microseconds since 1970 and
	// counting) are told apart by one.
	t.Run("LargeVersions", func(t *testing.T) {
		r := newReg(t)
		ann, n1 := id(t, "ann"), id(t, "n1")
		c1 := server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}
		const v = int64(1)<<53 - 10
		apply(t, r, server.PresenceChange{Presence: c1, Version: v}, server.PresenceChange{Presence: c1, Gone: true, Version: v + 1})
		nodes(t, r, []string{ann}, map[string][]string{})
	})
	t.Run("ErrEmptyField", func(t *testing.T) {
		r := newReg(t)
		ann, n1 := id(t, "ann"), id(t, "n1")
		err := r.Apply(ctx(t), []server.PresenceChange{
			{Presence: server.Presence{UserID: ann, ConnID: "c1", NodeID: n1}, Version: 1},
			{Presence: server.Presence{UserID: ann, NodeID: n1}, Version: 2},
		})
		if err == nil {
			t.Fatal("Apply with an empty connection id succeeded")
		}
		nodes(t, r, []string{ann}, map[string][]string{})
	})
}
