package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// Presence: a member sees whether the others are online and, once they are
// not, when they were last seen; the asker is not listed, and someone outside
// the conversation sees nothing.
func TestPresenceOfMembers(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	conv := alice.direct("bob")
	presence := func() map[string]wire.MemberPresence {
		t.Helper()
		var resp wire.PresenceResponse
		if st := alice.do("GET", "/v1/conversations/"+conv+"/presence", nil, &resp); st != http.StatusOK {
			t.Fatalf("presence: %d", st)
		}
		out := map[string]wire.MemberPresence{}
		for _, m := range resp.Members {
			out[m.UserID] = m
		}
		return out
	}
	dial(t, alice)
	if p := presence(); len(p) != 1 || p["bob"].Online || !p["bob"].LastSeen.IsZero() {
		t.Fatalf("bob never connected: %+v, want only bob, offline, never seen", p)
	}
	b := dial(t, bob)
	testenv.WaitFor(t, wait, func() bool { return presence()["bob"].Online })
	before := time.Now().Add(-time.Second)
	b.close()
	testenv.WaitFor(t, wait, func() bool { return !presence()["bob"].Online })
	if seen := presence()["bob"].LastSeen; seen.Before(before) || seen.After(time.Now().Add(time.Second)) {
		t.Fatalf("bob's last seen = %v, want about now (%v)", seen, before)
	}
	var e wire.ErrorResponse
	if st := carol.do("GET", "/v1/conversations/"+conv+"/presence", nil, &e); st != http.StatusForbidden && st != http.StatusNotFound {
		t.Fatalf("an outsider asked for presence: %d %+v, want 403 or 404", st, e)
	}
}

// A member who hides their presence shows neither online nor last seen to
// anyone, and sees no one's; the setting is in their own profile only.
func TestPresenceHidden(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	dial(t, alice)
	dial(t, bob)
	presenceOf := func(asker *api, user string) wire.MemberPresence {
		t.Helper()
		var resp wire.PresenceResponse
		if st := asker.do("GET", "/v1/conversations/"+conv+"/presence", nil, &resp); st != http.StatusOK {
			t.Fatalf("presence: %d", st)
		}
		for _, m := range resp.Members {
			if m.UserID == user {
				return m
			}
		}
		t.Fatalf("no %s in %+v", user, resp.Members)
		return wire.MemberPresence{}
	}
	testenv.WaitFor(t, wait, func() bool { return presenceOf(alice, "bob").Online })
	hide := func(a *api, on bool) {
		t.Helper()
		var me wire.Profile
		if st := a.do("PATCH", "/v1/me", wire.ProfileUpdate{HidePresence: &on}, &me); st != http.StatusOK || me.HidePresence != on {
			t.Fatalf("PATCH /v1/me hide_presence=%v: %d %+v", on, st, me)
		}
	}
	hide(bob, true)
	if p := presenceOf(alice, "bob"); !p.Hidden || p.Online || !p.LastSeen.IsZero() {
		t.Fatalf("bob hides his presence, alice sees %+v", p)
	}
	var me, seen wire.Profile
	bob.do("GET", "/v1/me", nil, &me)
	alice.do("GET", "/v1/users/bob", nil, &seen)
	if !me.HidePresence || seen.HidePresence {
		t.Fatalf("bob's own profile %+v (want hide_presence), as alice sees it %+v (want none)", me, seen)
	}
	if p := presenceOf(bob, "alice"); !p.Hidden || p.Online {
		t.Fatalf("bob hides his presence but sees alice's: %+v", p)
	}
	hide(bob, false)
	if p := presenceOf(alice, "bob"); p.Hidden || !p.Online {
		t.Fatalf("bob shows his presence again, alice sees %+v", p)
	}
}
