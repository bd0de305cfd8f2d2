package roletest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// SendPath checks a server.SendPath against the roles it stands in for,
// which newBackends returns with it (they share their data).
func SendPath(t *testing.T, newBackends func(t *testing.T) server.Backends) {
	t.Run("Admit", func(t *testing.T) {
		b, c := newBackends(t), ctx(t)
		user, conv := id(t, "ann"), id(t, "c")
		a := b.SendPath.Admit(c, user, 3, conv, 2)
		if a.RateErr != nil || a.SeqErr != nil || a.Allowed != 2 || a.Taken != 2 || a.Last != 2 {
			t.Fatalf("Admit 2 of limit 3 = %+v; want both allowed, numbers 1..2", a)
		}
		// Past the limit: the first one allowed, the rest refused with a hint.
		// Numbers taken beyond the allowed ones are the caller's to give back.
		a = b.SendPath.Admit(c, user, 3, conv, 3)
		if a.RateErr != nil || a.SeqErr != nil || a.Allowed != 1 || a.Taken < 1 || a.Last-int64(a.Taken) != 2 ||
			a.RetryAfter <= 0 || a.RetryAfter > maxHint {
			t.Fatalf("Admit 3 more of limit 3 = %+v; want one allowed, numbers from 3, a hint", a)
		}
		if extra := a.Taken - a.Allowed; extra > 0 {
			if err := b.Sequencer.Release(c, conv, a.Last, extra); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := b.Sequencer.Next(c, conv); err != nil || got != 4 {
			t.Fatalf("Next after the admitted 3 = %d, %v; want 4: no gap", got, err)
		}
		// The window is the rate limiter's.
		if n, _, err := b.Rate.AllowN(c, user, 1, 3); err != nil || n != 0 {
			t.Fatalf("AllowN after the window filled = %d, %v; want 0", n, err)
		}
		// No limit: numbers only.
		a = b.SendPath.Admit(c, id(t, "bob"), 0, conv, 2)
		if a.RateErr != nil || a.SeqErr != nil || a.Allowed != 2 || a.Taken != 2 || a.Last != 6 {
			t.Fatalf("Admit 2 with no limit = %+v; want numbers 5..6", a)
		}
	})
	t.Run("Relay", func(t *testing.T) {
		b, c := newBackends(t), ctx(t)
		self, other, third := id(t, "self"), id(t, "other"), id(t, "third")
		ann, bob, cat, dan := id(t, "ann"), id(t, "bob"), id(t, "cat"), id(t, "dan")
		for _, p := range []server.Presence{{UserID: ann, ConnID: "a1", NodeID: self}, {UserID: bob, ConnID: "b1", NodeID: other},
			{UserID: bob, ConnID: "b2", NodeID: self}, {UserID: cat, ConnID: "c1", NodeID: other}, {UserID: cat, ConnID: "c2", NodeID: third}} {
			if err := b.Registry.Add(c, p); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]chan server.Envelope{}
		for _, n := range []string{self, other, third} {
			ch := make(chan server.Envelope, 16)
			if err := b.Broker.Subscribe(c, n, func(e server.Envelope) { ch <- e }); err != nil {
				t.Fatal(err)
			}
			got[n] = ch
		}
		for _, u := range []string{ann, bob, dan} { // cat's inbox is cold
			if err := b.Inbox.Fill(c, u, nil); err != nil {
				t.Fatal(err)
			}
		}
		conv, at := id(t, "conv"), time.UnixMilli(1_700_000_000_000)
		frames := [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)}
		users := []string{ann, bob, cat, dan}
		r := b.SendPath.Relay(c, self, users, frames, server.Touch{Users: users, ConvID: conv, At: at})
		if r.RegistryErr != nil || r.BrokerErr != nil || r.TouchErr != nil {
			t.Fatalf("Relay: %+v", r)
		}
		if want := map[string]bool{ann: true, bob: true, cat: true}; !equalOnline(r.Online, want) {
			t.Fatalf("Relay online = %v; want %v", r.Online, want)
		}
		// Every frame reaches each other node for each of its users, in order
		// (in one envelope per node, or one per user and node).
		for node, want := range map[string][]string{other: {bob, cat}, third: {cat}} {
			per := map[string][][]byte{}
			for n := 0; n < len(want)*len(frames); {
				select {
				case e := <-got[node]:
					for _, u := range e.UserIDs {
						per[u] = append(per[u], e.Frame)
						n++
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("node %s: frames for %v not all delivered (got %q)", node, want, per)
				}
			}
			for _, u := range want {
				if !slices.EqualFunc(per[u], frames, bytes.Equal) {
					t.Fatalf("node %s got %q for %s; want %q", node, per[u], u, frames)
				}
			}
			if len(per) != len(want) {
				t.Fatalf("node %s got frames for %q; want for %v only", node, per, want)
			}
		}
		select {
		case e := <-got[self]:
			t.Fatalf("published to its own node: %+v", e)
		case <-time.After(100 * time.Millisecond):
		}
		for _, u := range []string{ann, bob, dan} {
			if ids, err := b.Inbox.Top(c, u, 10); err != nil || !slices.Equal(ids, []string{conv}) {
				t.Fatalf("inbox of %s = %v, %v; want the conversation touched", u, ids, err)
			}
		}
		if _, err := b.Inbox.Top(c, cat, 10); err != server.ErrCold {
			t.Fatalf("cold inbox after a touch: %v; want ErrCold", err)
		}
		// No touch: publishes only.
		r = b.SendPath.Relay(c, self, []string{dan}, frames[:1], server.Touch{})
		if r.RegistryErr != nil || r.TouchErr != nil || len(r.Online) != 0 {
			t.Fatalf("Relay to an offline user = %+v", r)
		}
	})
}

func equalOnline(got, want map[string]bool) bool {
	n := 0
	for u, on := range got {
		if on {
			if !want[u] {
				return false
			}
			n++
		}
	}
	return n == len(want)
}
