package main

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
)

// A user registered with a display name appears by it, with the id beside it,
// in history, tail, search and ls; --json keeps the bare ids.
func TestDisplayNames(t *testing.T) {
	srv := servertest.Start(t)
	alice := newUser(t, srv, "alice", "--name", "Alice Liddell")
	bob := newUser(t, srv, "bob") // no name: appears by id alone
	first := strings.TrimSpace(alice.must("", "send", "--to", "bob", "down the rabbit hole"))
	bob.must("", "send", "--to", "alice", "--reply-to", first, "mind the cat")

	h := bob.must("", "history", "--with", "alice")
	for _, want := range []string{
		"Alice Liddell (alice): down the rabbit hole",
		"bob: (reply to #" + first + " Alice Liddell (alice): “down the rabbit hole”) mind the cat",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("history lacks %q:\n%s", want, h)
		}
	}
	if js := bob.must("", "history", "--with", "alice", "--json"); strings.Contains(js, "Liddell") || !strings.Contains(js, `"sender_id":"alice"`) {
		t.Errorf("history --json changed:\n%s", js)
	}
	if ls := bob.must("", "ls"); !strings.Contains(ls, "Alice Liddell (alice)") {
		t.Errorf("ls:\n%s", ls)
	}
	bob.must("", "fetch", "--with", "alice")
	if s := bob.must("", "search", "rabbit"); !strings.Contains(s, "Alice Liddell (alice): down the rabbit hole") {
		t.Errorf("search:\n%s", s)
	}
	lines, stderr := bob.tailLines("--with", "alice")
	alice.must("", "send", "--to", "bob", "curiouser")
	if l := waitLine(t, lines, stderr, "curiouser"); !strings.Contains(l, "Alice Liddell (alice): curiouser") {
		t.Errorf("tail line %q", l)
	}
}

// countingTransport counts the profile requests made through it.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/v1/users/") {
		c.n.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A page of many messages asks for each sender's profile once, not once per
// message; an unknown user is asked about once too.
func TestNamesAskedOncePerUser(t *testing.T) {
	srv := servertest.Start(t)
	newUser(t, srv, "alice", "--name", "Alice Liddell")
	bob := newUser(t, srv, "bob")
	var ct countingTransport
	api := client.NewAPI(srv.URL, bob.api().Token(), &http.Client{Transport: &ct})
	who := cachedNames(context.Background(), api)
	for range 100 {
		if l := who("alice"); l != "Alice Liddell (alice)" {
			t.Fatalf("alice is %q", l)
		}
		if l := who("bob"); l != "bob" {
			t.Fatalf("bob is %q", l)
		}
		if l := who("nobody"); l != "nobody" {
			t.Fatalf("nobody is %q", l)
		}
	}
	if n := ct.n.Load(); n != 3 {
		t.Fatalf("%d profile requests for 300 labels of 3 users, want 3", n)
	}
}

// An unreachable server costs one request, not one per sender: the rest of
// the run shows ids.
func TestNamesOffline(t *testing.T) {
	var ct countingTransport
	api := client.NewAPI("http://127.0.0.1:1", "token", &http.Client{Transport: &ct})
	who := cachedNames(context.Background(), api)
	for _, u := range []string{"alice", "bob", "carol", "alice"} {
		if l := who(u); l != u {
			t.Fatalf("%s is %q offline", u, l)
		}
	}
	if n := ct.n.Load(); n != 1 {
		t.Fatalf("%d profile requests offline, want 1", n)
	}
}

func TestNameLabel(t *testing.T) {
	for _, c := range []struct{ id, name, want string }{
		{"alice", "Alice Liddell", "Alice Liddell (alice)"},
		{"alice", "alice", "alice"},
		{"alice", "ALICE ", "alice"},
		{"alice", "", "alice"},
		{"alice", "Alice\x1b[2J\nLiddell", "Alice[2J Liddell (alice)"}, // the escape byte gone, one line
	} {
		if got := nameLabel(c.id, c.name); got != c.want {
			t.Errorf("nameLabel(%q, %q) = %q, want %q", c.id, c.name, got, c.want)
		}
	}
}

// chat tail hears of a name changed while it runs: the lines after it show
// the new name, not the one it started with.
func TestTailFollowsProfileChanges(t *testing.T) {
	srv := servertest.Start(t)
	alice := newUser(t, srv, "alice", "--name", "Alice Liddell")
	bob := newUser(t, srv, "bob")
	alice.must("", "send", "--to", "bob", "down the rabbit hole")
	lines, stderr := bob.tailLines("--with", "alice")
	if l := waitLine(t, lines, stderr, "rabbit"); !strings.Contains(l, "Alice Liddell (alice)") {
		t.Fatalf("tail line before the change %q", l)
	}
	alice.must("", "profile", "--name", "Alice Pleasance")
	// The profile push and the next message travel the same connection,
	// the push first: the message's line has the name as it now is.
	alice.must("", "send", "--to", "bob", "curiouser")
	if l := waitLine(t, lines, stderr, "curiouser"); !strings.Contains(l, "Alice Pleasance (alice): curiouser") {
		t.Errorf("tail line after the change %q, want the new name", l)
	}
}
