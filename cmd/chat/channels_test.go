package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// The group commands say what they did, and each change is a line of the
// conversation in chat history, in order with the messages.
func TestGroupChangesPrintAndShowInHistory(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.Limits = server.UserLimits{MemberAdds: 100} }))
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	newUser(t, srv, "carol")
	gid := strings.TrimSpace(alice.must("", "group", "create", "ops team", "--members", "bob"))
	wantLines(t, "group add", alice.must("", "group", "add", gid, "carol"), "you added carol to ops team ("+gid+")")
	bob.must("", "send", "--group", gid, "hi all")
	wantLines(t, "group rename", alice.must("", "group", "rename", gid, "night shift"), "you renamed the group to “night shift”")
	wantLines(t, "group topic", alice.must("", "group", "topic", gid, "deploys"), "you set the topic to “deploys”")
	wantLines(t, "group admin", alice.must("", "group", "admin", gid, "bob"), "you made bob admin")
	wantLines(t, "group admin --revoke", alice.must("", "group", "admin", "--revoke", gid, "bob"), "you took admin from bob")
	wantLines(t, "group remove", alice.must("", "group", "remove", gid, "carol"), "you removed carol from "+gid)
	wantLines(t, "leave", bob.must("", "group", "remove", gid, "bob"), "you left "+gid)

	hist := alice.must("", "history", "--group", gid)
	want := []string{"alice added carol", "bob: hi all", "alice renamed the group to “night shift”", "alice set the topic to “deploys”",
		"alice made bob admin", "alice took admin from bob", "alice removed carol", "bob left"}
	at := 0
	for _, line := range strings.Split(strings.TrimSpace(hist), "\n") {
		if at < len(want) && strings.HasSuffix(line, want[at]) {
			at++
		}
	}
	if at != len(want) {
		t.Fatalf("history lacks %q (in order):\n%s", want[at], hist)
	}
	if _, errOut, code := alice.run("", "group", "admin", gid, "nobody"); code == 0 || !strings.Contains(errOut, "not a member") {
		t.Fatalf("admin of a non-member: exit %d %q", code, errOut)
	}
}

// chat channels lists what chat channel create made, marks the ones joined;
// joining gives the history, leaving says so.
func TestChannelCommands(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	if out, errOut, code := bob.run("", "channels"); code != 0 || out != "" || !strings.Contains(errOut, "no channels yet") {
		t.Fatalf("no channels: exit %d %q %q", code, out, errOut)
	}
	id := strings.TrimSpace(alice.must("", "channel", "create", "ops", "--topic", "deploys"))
	alice.must("", "group", "create", "secret", "--members", "bob")
	alice.must("", "send", "--group", id, "before bob")
	if out := bob.must("", "channels"); strings.TrimSpace(out) != id+" ops — deploys" {
		t.Fatalf("bob's list: %q", out)
	}
	wantLines(t, "join", bob.must("", "channel", "join", id), "you joined ops ("+id+")")
	wantLines(t, "history after joining", bob.must("", "history", "--group", id), "alice: before bob", "bob joined")
	if out := bob.must("", "channels"); !strings.HasPrefix(out, "* "+id) {
		t.Fatalf("after joining: %q", out)
	}
	var c wire.ChannelInfo
	if err := json.Unmarshal([]byte(bob.must("", "channels", "--json")), &c); err != nil || c.ConversationID != id || !c.Joined || c.Topic != "deploys" {
		t.Fatalf("--json: %+v %v", c, err)
	}
	wantLines(t, "leave", bob.must("", "channel", "leave", id), "you left "+id)
	if _, errOut, code := bob.run("", "channel", "join", "g:nosuchchannel"); code == 0 || !strings.Contains(errOut, "no channel") {
		t.Fatalf("joining nothing: exit %d %q", code, errOut)
	}
	if _, _, code := bob.run("", "channel", "join"); code != exitUsage {
		t.Fatalf("join without an id: exit %d", code)
	}
}
