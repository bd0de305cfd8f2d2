package main

import (
	"strings"
	"testing"

	"github.com/chatterm/chat/server/servertest"
)

// chat send --to yourself writes to your note to self, which history, ls and
// your other machines show like any other conversation.
func TestNoteToSelf(t *testing.T) {
	srv := servertest.Start(t)
	alice := newUser(t, srv, "alice")
	alice.must("", "send", "--to", "alice", "buy milk")
	alice.must("", "send", "--to", "@Alice", "and eggs")
	out := alice.must("", "history", "--with", "alice")
	if !strings.Contains(out, "alice: buy milk") || !strings.Contains(out, "alice: and eggs") ||
		strings.Index(out, "buy milk") > strings.Index(out, "and eggs") {
		t.Fatalf("history:\n%s", out)
	}
	if ls := alice.must("", "ls"); !strings.Contains(ls, "@alice") || !strings.Contains(ls, "and eggs") {
		t.Fatalf("ls:\n%s", ls)
	}
	// Bad input is still refused: nothing to send.
	if _, stderr, code := alice.run("", "send", "--to", "alice", ""); code == 0 {
		t.Fatalf("empty note sent: %s", stderr)
	}
}
