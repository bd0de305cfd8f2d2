package main

import (
	"strings"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
)

// chat search finds a group's membership lines by the words of the line,
// in the group and across every conversation, and prints them as history
// does.
func TestSearchFindsMembershipLines(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.Limits = server.UserLimits{MemberAdds: 100} }))
	alice, _ := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	newUser(t, srv, "carol")
	gid := strings.TrimSpace(alice.must("", "group", "create", "ops team", "--members", "bob"))
	alice.must("", "group", "add", gid, "carol")
	alice.must("", "send", "--group", gid, "welcome carol")
	alice.must("", "group", "rename", gid, "night shift")
	alice.must("", "fetch", "--group", gid)

	out := alice.must("", "search", "--group", gid, "alice", "added", "carol")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], "alice added carol") {
		t.Fatalf("search --group %s alice added carol:\n%s", gid, out)
	}
	out = alice.must("", "search", "night", "shift")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], "alice renamed the group to “night shift”") {
		t.Fatalf("search night shift:\n%s", out)
	}
	if out := alice.must("", "search", "--group", gid, "--json", "carol"); !strings.Contains(out, `"snippet":"alice added carol"`) ||
		!strings.Contains(out, `"snippet":"welcome carol"`) {
		t.Fatalf("search --json carol, the line and the message:\n%s", out)
	}
}
