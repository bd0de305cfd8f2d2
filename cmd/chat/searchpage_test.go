package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chatterm/chat/server/servertest"
)

// chat search pages its results: the newest --limit first, and on stderr
// the --before that gives the next page; the pages together are every hit
// once, newest first. With --json the cursor is the last line's "next".
func TestSearchPages(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	in := new(strings.Builder)
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(in, "invoice %d\n", i)
	}
	bob.must(in.String(), "send", "--to", "alice", "--lines")
	alice.must("", "fetch", "--with", "bob")

	more := regexp.MustCompile(`--before (\S+)\)`)
	var got []string
	args := []string{"search", "--with", "bob", "--limit", "10", "invoice"}
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("paging does not end")
		}
		out, stderr, code := alice.run("", args...)
		if code != 0 {
			t.Fatalf("search: exit %d, %s", code, stderr)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			got = append(got, l[strings.Index(l, "invoice"):])
		}
		m := more.FindStringSubmatch(stderr)
		if m == nil {
			break
		}
		args = []string{"search", "--with", "bob", "--limit", "10", "--before", m[1], "invoice"}
	}
	var want []string
	for i := 25; i >= 1; i-- {
		want = append(want, fmt.Sprintf("invoice %d", i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages put together:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	out := alice.must("", "search", "--limit", "20", "--json", "invoice")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct{ Next string }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Next == "" || len(lines) != 21 {
		t.Fatalf("--json: %d lines, the last %q: want 20 messages and {\"next\": …}", len(lines), lines[len(lines)-1])
	}
	out = alice.must("", "search", "--limit", "20", "--json", "--before", last.Next, "invoice")
	if n := strings.Count(out, `"seq_no"`); n != 5 || strings.Contains(out, `"next"`) {
		t.Fatalf("the page after %s: %d messages, want the last 5 and no next:\n%s", last.Next, n, out)
	}

	if _, stderr, code := alice.run("", "search", "--before", "x.y", "invoice"); code != 2 || !strings.Contains(stderr, "--before") {
		t.Fatalf("a bad cursor: exit %d, %q", code, stderr)
	}
}
