package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// chat send --reply-to, react, edit and delete, and what history prints of
// them: the messages as the events left them, and a line per event.
func TestReplyReactEditDelete(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	first := strings.TrimSpace(alice.must("", "send", "--to", "bob", "lunch at noon?"))
	reply := strings.TrimSpace(bob.must("", "send", "--to", "alice", "--reply-to", first, "yes"))
	bob.must("", "react", "--to", "alice", first, "👍")
	alice.must("", "edit", "--to", "bob", first, "lunch at one?")
	bob.must("", "delete", "--to", "alice", reply)

	out := alice.must("", "history", "--with", "bob")
	for _, want := range []string{
		"#" + first + " alice: lunch at one? (edited)  [👍 bob]",
		"#" + reply + " bob: [deleted]",
		"bob reacted 👍 to #" + first,
		"alice edited #" + first + ": lunch at one?",
		"bob deleted #" + reply,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "yes") {
		t.Errorf("a deleted message's text is still shown:\n%s", out)
	}

	// --json shows the state and the events as they are stored.
	js := alice.must("", "history", "--with", "bob", "--json")
	var msgs []wire.Message
	sc := bufio.NewScanner(strings.NewReader(js))
	for sc.Scan() {
		var m wire.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 5 || msgs[0].Reactions["bob"] != "👍" || !msgs[0].Edited || msgs[1].ReplyTo != msgs[0].SeqNo || !msgs[1].Deleted ||
		msgs[2].Kind != wire.KindReaction || msgs[3].Kind != wire.KindEdit || msgs[4].Kind != wire.KindDelete {
		t.Fatalf("history --json: %s", js)
	}

	// The same reaction again takes it back, and says so.
	_, stderr, code := bob.run("", "react", "--to", "alice", first, "👍")
	if code != 0 || !strings.Contains(stderr, "taken back") {
		t.Fatalf("a second 👍: exit %d, %q", code, stderr)
	}
	// Refusals: exit non-zero with one line, nothing changed.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"edit", "--to", "alice", first, "not mine"}, "only its sender can edit"},
		{[]string{"delete", "--to", "alice", first}, "only its sender or a group admin"},
		{[]string{"react", "--to", "alice", "999", "👍"}, "no message 999"},
		{[]string{"react", "--to", "alice", first, "two words"}, "a reaction is one emoji"},
		{[]string{"react", "--to", "alice", first, "👍", "🎉"}, "give one emoji"},
		{[]string{"react", "--to", "alice", "x", "👍"}, "not a seq_no"},
		{[]string{"delete", "--to", "alice", reply, "extra"}, "seq_no only"},
	} {
		_, stderr, code := bob.run("", tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want a one-line error with %q", tc.args, code, stderr, tc.want)
		}
	}
	if got := alice.must("", "history", "--with", "bob"); !strings.Contains(got, "lunch at one? (edited)") || strings.Contains(got, "[👍") {
		t.Errorf("after refusals and a taken-back reaction:\n%s", got)
	}
}

// chat fetch fills the cache with a whole conversation; chat search then
// finds in it, newest first, narrowed to one conversation or not, with a
// snippet in --json.
func TestFetchAndSearch(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	in := new(strings.Builder)
	for i := 1; i <= 130; i++ { // more than one page of history
		fmt.Fprintf(in, "routine line %d\n", i)
		if i == 7 {
			in.WriteString("the Deployment failed on node 3\n")
		}
	}
	bob.must(in.String(), "send", "--to", "alice", "--lines")
	bob.must("", "send", "--to", "alice", "deploy retried, all green")

	if out, _, _ := alice.run("", "search", "deploy"); strings.Contains(out, "Deployment") {
		t.Fatalf("found before the cache was filled:\n%s", out)
	}
	if _, stderr, code := alice.run("", "fetch", "--with", "bob"); code != 0 || !strings.Contains(stderr, "whole history") {
		t.Fatalf("fetch: exit %d, %q", code, stderr)
	}
	out := alice.must("", "search", "deploy")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "deploy retried") || !strings.Contains(lines[1], "the Deployment failed") {
		t.Fatalf("search deploy, newest first:\n%s", out)
	}
	if out := alice.must("", "search", "--with", "bob", "--json", "FAILED", "node"); !strings.Contains(out, `"snippet":"the Deployment failed on node 3"`) ||
		!strings.Contains(out, `"seq_no":8`) {
		t.Fatalf("search --json:\n%s", out)
	}
	if _, stderr, code := alice.run("", "search"); code != 2 || !strings.Contains(stderr, "what to search for") {
		t.Fatalf("search with no words: exit %d, %q", code, stderr)
	}
}

// A reply's line in history, tail and search starts with what it answers: the
// sender and first words of that message, from the page, the cache or the
// server; "deleted" once it is; made safe for the terminal like any text.
func TestRepliesShowWhatTheyAnswer(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	long := strings.TrimSpace(alice.must("", "send", "--to", "bob", "lunch at noon? let's meet by the fountain in the park near the office"))
	short := strings.TrimSpace(alice.must("", "send", "--to", "bob", "or at one"))
	reply := strings.TrimSpace(bob.must("", "send", "--to", "alice", "--reply-to", long, "yes"))
	wantLong := "#" + reply + " bob: (reply to #" + long + " alice: “lunch at noon? let's meet by the founta…”) yes"

	if out := bob.must("", "history", "--with", "alice"); !strings.Contains(out, wantLong) {
		t.Errorf("history (the answered message in the page):\n%s\nwant a line with %q", out, wantLong)
	}
	// Only the reply in the page: the answered message comes from the server.
	if out := bob.must("", "history", "--with", "alice", "--limit", "1"); !strings.Contains(out, wantLong) {
		t.Errorf("history --limit 1 (the answered message outside the page):\n%s\nwant a line with %q", out, wantLong)
	}
	// search reads the cache only, which fetch fills.
	bob.must("", "fetch", "--with", "alice")
	if out := bob.must("", "search", "--with", "alice", "yes"); !strings.Contains(out, wantLong) {
		t.Errorf("search:\n%s\nwant a line with %q", out, wantLong)
	}

	// tail: a live reply to a message tail has not seen is quoted from the server.
	lines, stderr := bob.tailLines("--with", "alice")
	live := strings.TrimSpace(alice.must("", "send", "--to", "bob", "--reply-to", short, "see you then"))
	waitLine(t, lines, stderr, "#"+live+" alice: (reply to #"+short+" alice: “or at one”) see you then")

	// Deleted, the answered message is no longer quoted; hostile text is cleaned.
	alice.must("", "delete", "--to", "bob", long)
	conv := wire.DirectConversationID("alice", "bob")
	sent, _, err := alice.api().SendMessage(context.Background(), conv, wire.SendRequest{MessageID: "evil-quoted", Content: hostile})
	if err != nil {
		t.Fatal(err)
	}
	bob.must("", "send", "--to", "alice", "--reply-to", fmt.Sprint(sent.SeqNo), "what?")
	out := bob.must("", "history", "--with", "alice")
	if want := "(reply to #" + long + ", deleted) yes"; !strings.Contains(out, want) {
		t.Errorf("history after the delete:\n%s\nwant a line with %q", out, want)
	}
	if !strings.Contains(out, "(reply to #"+fmt.Sprint(sent.SeqNo)+" alice: “hi") {
		t.Errorf("history lacks the quoted hostile message:\n%s", out)
	}
	if r, bad := terminalUnsafe(out); bad {
		t.Errorf("history printed %U: %q", r, out)
	}
}
