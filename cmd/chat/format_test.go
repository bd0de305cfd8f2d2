package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

const formatted = "the **build** is red: `go test` fails\n> it was green\n- rerun\n[log](https://ci.example/1)"

// history, search and tail print message text drawn from its Markdown: plain
// into a pipe, styled for a terminal; --raw prints it as written.
func TestMessageTextIsFormatted(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := bob.api().SendMessage(context.Background(), conv, wire.SendRequest{MessageID: "md-1", Content: formatted}); err != nil {
		t.Fatal(err)
	}
	drawn := "the build is red: go test fails\n    │ it was green\n    • rerun\n      log (https://ci.example/1)\n" // the link line continues the item
	t.Run("history into a pipe", func(t *testing.T) {
		out := alice.must("", "history", "--with", "bob")
		if !strings.HasSuffix(out, "bob: "+drawn) {
			t.Errorf("got %q, want it to end in %q", out, drawn)
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("escape sequences into a pipe: %q", out)
		}
	})
	t.Run("raw", func(t *testing.T) {
		out := alice.must("", "history", "--with", "bob", "--raw")
		want := "bob: " + strings.ReplaceAll(formatted, "\n", "\n    ") + "\n"
		if !strings.HasSuffix(out, want) {
			t.Errorf("got %q, want it to end in %q", out, want)
		}
	})
	t.Run("search", func(t *testing.T) {
		alice.must("", "fetch", "--with", "bob")
		if out := alice.must("", "search", "build"); !strings.Contains(out, drawn) {
			t.Errorf("got %q, want %q", out, drawn)
		}
		if out := alice.must("", "search", "--raw", "build"); !strings.Contains(out, "**build**") {
			t.Errorf("--raw: got %q", out)
		}
	})
	t.Run("tail", func(t *testing.T) {
		lines, stderr := alice.tailLines("--with", "bob")
		waitLine(t, lines, stderr, "the build is red: go test fails")
		if _, _, err := bob.api().SendMessage(context.Background(), conv, wire.SendRequest{MessageID: "md-2", Content: "~~old~~ *new*"}); err != nil {
			t.Fatal(err)
		}
		waitLine(t, lines, stderr, "bob: old new")
	})
	t.Run("terminal", func(t *testing.T) {
		a := &app{stdoutTTY: func() (int, bool) { return 30, true }}
		out, errOut, code := alice.runApp(a, time.Minute, "history", "--with", "bob")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{"\x1b[1mbuild\x1b[m", "\x1b]8;;https://ci.example/1\a"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q lacks %q", out, want)
			}
		}
		// Wrapped to the terminal's width less the indent.
		if !strings.Contains(out, "bob: the \x1b[1mbuild\x1b[m is red: \x1b[36mgo test\x1b[m\n    fails") {
			t.Errorf("not wrapped at 26 cells: %q", out)
		}
	})
}
