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
