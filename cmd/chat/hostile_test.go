package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// hostile is a message written to take over the reader's terminal: a title
// change, a clipboard write, a screen clear, a line forged by erasing and
// returning, a hyperlink, an 8-bit CSI and a right-to-left override.
const hostile = "hi\x1b]0;pwned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b[2J ok\x1b[1K\rbob: trust me" +
	" \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \u009b31m \u202eexe.txt\u2066\u200f"

// terminalUnsafe names the first rune of s a terminal could act on.
func terminalUnsafe(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\n':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return r, true
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return r, true
		}
	}
	return 0, !utf8.ValidString(s)
}

func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")
	// Sent through the API, as any client could: the server stores text as written.
	if _, _, err := bob.api().SendMessage(context.Background(), conv, wire.SendRequest{MessageID: "evil-1", Content: hostile}); err != nil {
		t.Fatal(err)
	}
	check := func(what, out string) {
		t.Helper()
		if r, bad := terminalUnsafe(out); bad {
			t.Errorf("%s printed %U: %q", what, r, out)
		}
	}
	t.Run("history", func(t *testing.T) {
		out := alice.must("", "history", "--with", "bob")
		check("history", out)
		if !strings.Contains(out, "bob: trust me") || !strings.Contains(out, "exe.txt") {
			t.Fatalf("history lost the readable text: %q", out)
		}
	})
	t.Run("ls", func(t *testing.T) {
		check("ls", alice.must("", "ls"))
	})
	t.Run("JSONIsExact", func(t *testing.T) {
		out := alice.must("", "history", "--with", "bob", "--json")
		var m wire.Message
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &m); err != nil {
			t.Fatal(err)
		}
		if m.Content != hostile {
			t.Fatalf("--json changed the text: %q", m.Content)
		}
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Fatalf("--json output carries raw controls: %q", out)
		}
	})
	t.Run("tail", func(t *testing.T) {
		lines, stderr := alice.tailLines("--with", "bob")
		check("tail", waitLine(t, lines, stderr, "bob: trust me"))
	})
}
