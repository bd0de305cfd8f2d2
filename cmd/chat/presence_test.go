package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// chat presence says who is online; chat profile --hide-presence hides it,
// both ways, and is shown back in chat profile.
func TestPresenceAndProfile(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	alice.must("hi\n", "send", "--to", "bob")
	if out := alice.must("", "presence", "--with", "bob"); !strings.HasPrefix(out, "bob\toffline") && !strings.HasPrefix(out, "bob\tlast seen") {
		t.Fatalf("chat presence with bob offline: %q", out)
	}
	if out := bob.must("", "profile", "--hide-presence", "on"); !strings.Contains(out, "presence:  hidden") {
		t.Fatalf("chat profile --hide-presence on: %q", out)
	}
	var resp wire.PresenceResponse
	if err := json.Unmarshal([]byte(alice.must("", "presence", "--with", "bob", "--json")), &resp); err != nil ||
		len(resp.Members) != 1 || !resp.Members[0].Hidden {
		t.Fatalf("chat presence --json after bob hid: %+v, %v", resp, err)
	}
	if out := bob.must("", "profile", "--name", "Bob B.", "--hide-presence", "off"); !strings.Contains(out, "name:      Bob B.") || !strings.Contains(out, "presence:  shown") {
		t.Fatalf("chat profile --name --hide-presence off: %q", out)
	}
	if _, errOut, code := bob.run("", "profile", "--hide-presence", "maybe"); code != exitUsage || !strings.Contains(errOut, "on or off") {
		t.Fatalf("chat profile --hide-presence maybe: exit %d %q", code, errOut)
	}
	if _, _, code := alice.run("", "presence", "--group", "g:nosuchgroup"); code != exitUnknown {
		t.Fatalf("chat presence of an unknown group: exit %d, want %d", code, exitUnknown)
	}
}
