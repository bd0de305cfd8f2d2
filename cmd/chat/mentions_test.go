package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// TestMentions: chat ls counts the unread mentions, chat mentions lists
// them, chat tail --mentions prints only them, and chat mentions --group sets
// a group's @all rule, after which a member's @all is refused.
func TestMentions(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	newUser(t, srv, "carol")
	gid := strings.TrimSpace(alice.must("", "group", "create", "ops", "--members", "bob,carol"))
	lines, stderr := bob.tailLines("--mentions", "--json")
	alice.must("", "send", "--group", gid, "nothing for bob")
	alice.must("", "send", "--group", gid, "@bob can you look?")
	alice.must("", "send", "--group", gid, "@carol and @dave")
	var m wire.Message
	if err := json.Unmarshal([]byte(waitLine(t, lines, stderr, "look")), &m); err != nil || m.Mentions[0] != "bob" {
		t.Fatalf("tail --mentions: %+v, %v", m, err)
	}
	alice.must("", "send", "--group", gid, "@all done")
	if l := waitLine(t, lines, stderr, "@"); !strings.Contains(l, "@all done") {
		t.Fatalf("tail --mentions printed %q, want the @all (nothing between)", l)
	}

	ls := bob.must("", "ls")
	if !strings.Contains(ls, "@2(4)") {
		t.Fatalf("ls lacks bob's two mentions of four unread:\n%s", ls)
	}
	var e wire.InboxEntry
	if err := json.Unmarshal([]byte(bob.must("", "ls", "--json")), &e); err != nil || e.Mentions != 2 || e.Unread != 4 {
		t.Fatalf("ls --json: %+v, %v", e, err)
	}
	out := bob.must("", "mentions")
	if got := strings.Count(out, "\n"); got != 2 || !strings.Contains(out, "@all done") || strings.Index(out, "@all done") > strings.Index(out, "@bob can") {
		t.Fatalf("chat mentions, newest first:\n%s", out)
	}
	page, errOut, code := bob.run("", "mentions", "--limit", "1")
	if code != 0 || !strings.Contains(page, "@all done") || !strings.Contains(errOut, "--next ") {
		t.Fatalf("a page of one: exit %d\n%s%s", code, page, errOut)
	}
	next := strings.TrimSuffix(strings.TrimSpace(errOut[strings.Index(errOut, "--next ")+len("--next "):]), ")")
	older, errOut, code := bob.run("", "mentions", "--limit", "1", "--next", next)
	if code != 0 || !strings.Contains(older, "@bob can") || strings.Contains(errOut, "--next") {
		t.Fatalf("the next and last page (--next %s): exit %d\n%s%s", next, code, older, errOut)
	}
	if _, _, code := bob.run("", "mentions", "--next", "not-a-cursor"); code != exitUsage {
		t.Fatalf("a bad --next: exit %d", code)
	}
	if out := bob.must("", "mentions", "--before", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); !strings.Contains(out, "@bob can") {
		t.Fatalf("--before an hour from now:\n%s", out)
	}

	if _, _, code := bob.run("", "mentions", "--group", gid, "--all", "admins"); code == 0 {
		t.Fatal("a member set the @all rule")
	}
	if out := alice.must("", "mentions", "--group", gid, "--all", "admins"); !strings.Contains(out, "admins only") {
		t.Fatalf("set the rule: %q", out)
	}
	// Refused for what the message says, not for where it goes: exit 2 with
	// the server's line, never exit 4's "not a member".
	if _, errOut, code := bob.run("", "send", "--group", gid, "@here lunch"); code != exitUsage ||
		!strings.Contains(errOut, "only the admins of "+gid+" may use @all or @here; send it without them") {
		t.Fatalf("bob's @here after the rule: exit %d %q, want %d and the server's line", code, errOut, exitUsage)
	}
	if _, _, code := bob.run("", "mentions", "--all", "admins"); code != exitUsage {
		t.Fatalf("--all without --group: exit %d", code)
	}
}

// The TUI's highlight words come from CHAT_HIGHLIGHT_WORDS and from the
// highlight_words file in the chat home, comments left out.
func TestHighlightWords(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, highlightWordsFile), []byte("deploy\n# a comment\n  on call  # trailing\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := highlightWords(client.Config{Home: home}, "alice, Launch ,")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alice", "Launch", "deploy", "on call"}; !slices.Equal(got, want) {
		t.Fatalf("highlight words %q, want %q", got, want)
	}
	if got, err := highlightWords(client.Config{Home: t.TempDir()}, ""); err != nil || len(got) != 0 {
		t.Fatalf("none set: %q, %v", got, err)
	}
}
