package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
)

// A name changed while chat tail was reconnecting (its profile frame lost
// with the connection) shows on the lines after the reconnect: tail asks
// the names it knows again, as the TUI does (TestNamesAskedAgainOnReconnect).
func TestTailAsksNamesAgainOnReconnect(t *testing.T) {
	srv := servertest.Start(t)
	alice := newUser(t, srv, "alice", "--name", "Alice Liddell")
	bob := newUser(t, srv, "bob")
	proxy := testenv.NewProxy(t, srv.URL)
	bob.env = append(bob.env, "CHAT_SERVER="+proxy.URL(), "CHAT_TOKEN="+bob.api().Token())
	lines, stderr := bob.tailLines("--with", "alice")
	alice.must("", "send", "--to", "bob", "down the rabbit hole")
	if l := waitLine(t, lines, stderr, "rabbit"); !strings.Contains(l, "Alice Liddell (alice)") {
		t.Fatalf("tail line before the change %q", l)
	}
	// Stop closes tail's connection and the server's end of it at once:
	// the profile frame of the change has no connection of tail's to go to.
	proxy.Stop()
	alice.must("", "profile", "--name", "Alice Pleasance")
	proxy.Start()
	// Sent after the reconnect or fetched by its sync: either way the
	// message comes over the new connection, after tail heard it was back.
	alice.must("", "send", "--to", "bob", "curiouser")
	if l := waitLine(t, lines, stderr, "curiouser"); !strings.Contains(l, "Alice Pleasance (alice): curiouser") {
		t.Errorf("tail line after the reconnect %q, want the new name", l)
	}
}

// Only a connection back after it was lost asks again, and only the names
// shown after it: the first connect and a Connected repeated ask nothing.
// A server unreachable for a name is asked again after a reconnect too.
func TestTailNamesAskedAgainOnlyAfterALoss(t *testing.T) {
	srv := servertest.Start(t)
	bob := newUser(t, srv, "bob")
	newUser(t, srv, "alice")
	var ct countingTransport
	names := newNameCache(context.Background(), client.NewAPI(srv.URL, bob.api().Token(), &http.Client{Transport: &ct}))
	tl := newTailer(io.Discard, io.Discard, newTailOrder(localstore.MustOpen(t, localstore.Options{UserID: "bob"})))
	tl.reconnected = names.askAgain
	state := func(s client.ConnStatus) {
		t.Helper()
		if err := tl.event(context.Background(), client.StateEvent{State: client.State{Status: s}}); err != nil {
			t.Fatal(err)
		}
	}
	asked := func(want int64, when string) {
		t.Helper()
		names.label("alice")
		names.label("alice")
		if n := ct.n.Load(); n != want {
			t.Fatalf("%s: %d profile requests in all, want %d", when, n, want)
		}
	}
	state(client.Connecting)
	state(client.Connected)
	asked(1, "first connect")
	state(client.Connected)
	asked(1, "connected twice in a row")
	state(client.Reconnecting)
	state(client.Connected)
	asked(2, "after a reconnect")

	names.unreachable = true // a failed answer before the connection was lost
	state(client.Reconnecting)
	state(client.Connected)
	asked(3, "after a reconnect, the server unreachable before it")
}
