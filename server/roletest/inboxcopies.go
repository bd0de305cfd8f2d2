package roletest

import (
	"maps"
	"slices"
	"testing"

	"github.com/chatterm/chat/server"
)

// InboxCopies checks a server.InboxCopies: what a user's copy answers after
// Saves, Drops and Rejoins, and that one user's copy never answers another's.
// Expiry is the implementation's own test.
func InboxCopies(t *testing.T, newCopies func(t *testing.T) server.InboxCopies) {
	entry := func(conv, data string) server.CopiedEntry {
		return server.CopiedEntry{ConvID: conv, Data: []byte(data)}
	}
	load := func(t *testing.T, x server.InboxCopies, user string) map[string]string {
		t.Helper()
		got, err := x.Load(ctx(t), user)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		m := map[string]string{}
		for _, e := range got {
			if _, dup := m[e.ConvID]; dup {
				t.Fatalf("Load lists %s twice", e.ConvID)
			}
			m[e.ConvID] = string(e.Data)
		}
		return m
	}
	want := func(t *testing.T, got map[string]string, want ...string) {
		t.Helper()
		w := map[string]string{}
		for i := 0; i < len(want); i += 2 {
			w[want[i]] = want[i+1]
		}
		if !maps.Equal(got, w) {
			t.Fatalf("copy = %v, want %v", got, w)
		}
	}
	save := func(t *testing.T, x server.InboxCopies, user string, complete bool, es ...server.CopiedEntry) {
		t.Helper()
		if err := x.Save(ctx(t), user, es, complete); err != nil {
			t.Fatalf("Save: %v", err)
		}
	}

	t.Run("OK", func(t *testing.T) {
		x := newCopies(t)
		u, a, b, d := id(t, "u"), id(t, "a"), id(t, "b"), id(t, "d")
		want(t, load(t, x, u))
		save(t, x, u, false, entry(a, "a1"), entry(b, "b1"))
		want(t, load(t, x, u), a, "a1", b, "b1")
		// An answer cut at its limit is merged: what it does not list stays.
		save(t, x, u, false, entry(a, "a2"), entry(d, "d1"))
		want(t, load(t, x, u), a, "a2", b, "b1", d, "d1")
		// A complete answer is every conversation: it replaces the copy.
		save(t, x, u, true, entry(d, "d2"))
		want(t, load(t, x, u), d, "d2")
		save(t, x, u, true)
		want(t, load(t, x, u))
	})

	t.Run("UsersApart", func(t *testing.T) {
		x := newCopies(t)
		u, v, a := id(t, "u"), id(t, "v"), id(t, "a")
		save(t, x, u, false, entry(a, "u's view"))
		want(t, load(t, x, v))
		save(t, x, v, true, entry(a, "v's view"))
		want(t, load(t, x, u), a, "u's view")
		want(t, load(t, x, v), a, "v's view")
		if err := x.Drop(ctx(t), v, a); err != nil {
			t.Fatal(err)
		}
		want(t, load(t, x, u), a, "u's view")
		want(t, load(t, x, v))
	})

	t.Run("DropSticks", func(t *testing.T) {
		x := newCopies(t)
		u, v, a, b := id(t, "u"), id(t, "v"), id(t, "a"), id(t, "b")
		save(t, x, u, false, entry(a, "a1"), entry(b, "b1"))
		if err := x.Drop(ctx(t), u, a); err != nil {
			t.Fatal(err)
		}
		want(t, load(t, x, u), b, "b1")
		// A read that began before the removal saves after it: merged or
		// complete, the dropped conversation stays out.
		save(t, x, u, false, entry(a, "a2"), entry(b, "b2"))
		want(t, load(t, x, u), b, "b2")
		save(t, x, u, true, entry(a, "a3"), entry(b, "b3"))
		want(t, load(t, x, u), b, "b3")
		// A drop before there is any copy holds too.
		if err := x.Drop(ctx(t), v, a); err != nil {
			t.Fatal(err)
		}
		save(t, x, v, false, entry(a, "a1"))
		want(t, load(t, x, v))
		// Added back: the conversation comes into both copies again.
		if err := x.Rejoin(ctx(t), a, []string{u, v}); err != nil {
			t.Fatal(err)
		}
		save(t, x, u, false, entry(a, "a4"))
		save(t, x, v, false, entry(a, "a4"))
		want(t, load(t, x, u), a, "a4", b, "b3")
		want(t, load(t, x, v), a, "a4")
		if err := x.Rejoin(ctx(t), b, nil); err != nil {
			t.Fatalf("Rejoin of no one: %v", err)
		}
	})

	t.Run("ErrEmpty", func(t *testing.T) {
		x := newCopies(t)
		u := id(t, "u")
		if err := x.Save(ctx(t), "", []server.CopiedEntry{entry("a", "a")}, false); err == nil {
			t.Error("Save for no user: no error")
		}
		if err := x.Save(ctx(t), u, []server.CopiedEntry{entry("", "a")}, false); err == nil {
			t.Error("Save of an entry with no conversation: no error")
		}
		if err := x.Drop(ctx(t), u, ""); err == nil {
			t.Error("Drop of no conversation: no error")
		}
		if got := load(t, x, u); len(got) != 0 {
			t.Errorf("refused calls changed the copy: %v", slices.Collect(maps.Keys(got)))
		}
	})
}
