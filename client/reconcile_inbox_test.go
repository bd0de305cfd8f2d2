package client_test

import (
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

var reconcileConvs = flag.Int("reconcile-convs", 20, "cached conversations in TestReconcileWithoutAStoreIDReadsOnlyWhatDiffers")

// countHistory counts the history pages a client asks for.
type countHistory struct {
	next  http.RoundTripper
	pages atomic.Int64
}

func (c *countHistory) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/messages") {
		c.pages.Add(1)
	}
	return c.next.RoundTrip(r)
}

// After an upgrade, a cache with no recorded store id is compared with the
// server; conversations whose newest cached message is the server's newest
// (the inbox says so, in one request) need no history read. Before, each
// cost two or more, against the 30-a-second history limit.
func TestReconcileWithoutAStoreIDReadsOnlyWhatDiffers(t *testing.T) {
	convs := *reconcileConvs
	// The server's default history limit, which tests otherwise turn off:
	// what a reconciliation costs a user is the time its pages wait for it.
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.Limits.History = server.DefaultUserLimits.History }))
	bobAPI := register(t, srv, "bob")
	var ids []string
	var peers []*client.API
	for i := range convs {
		peer := fmt.Sprintf("peer%02d", i)
		api := register(t, srv, peer)
		conv := direct(t, api, "bob")
		if _, _, err := api.SendMessage(bg, conv, wire.SendRequest{MessageID: "m1", Content: "hello from " + peer}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, conv)
		peers = append(peers, api)
	}
	px := newProxy(t, hostport(t, srv.URL))
	counter := &countHistory{next: httpClient(t).Transport}
	bob := startDevice(t, bobAPI, px.URL(), "bob", func(c *client.SessionConfig) {
		c.API = client.NewAPI(px.URL(), bobAPI.Token(), &http.Client{Transport: counter})
	})
	bob.waitFor("every conversation cached", func() bool {
		for _, id := range ids {
			if len(bob.cached(id)) != 1 {
				return false
			}
		}
		return true
	})
	px.set(false)
	bob.waitFor("bob cut off", func() bool { return bob.sess.State().Status != client.Connected })
	// One conversation moved on while he was away: it differs from the cache.
	if _, _, err := peers[0].SendMessage(bg, ids[0], wire.SendRequest{MessageID: "m2", Content: "while you were away"}); err != nil {
		t.Fatal(err)
	}
	if err := bob.store.SetStoreID(bg, ""); err != nil {
		t.Fatal(err)
	}
	counter.pages.Store(0)
	start := time.Now()
	px.set(true)
	bob.waitFor("reconnected and synced", func() bool {
		return bob.sess.State().Status == client.Connected && len(bob.cached(ids[0])) == 2
	})
	took := time.Since(start)
	if n := counter.pages.Load(); n > 3 {
		t.Fatalf("reconciling %d cached conversations, one of them behind, read %d history pages in %v; want at most 3 (the one that differs)", convs, n, took.Round(time.Millisecond))
	} else {
		t.Logf("history pages read reconciling %d conversations (1 behind): %d; connected and synced in %v", convs, n, took.Round(time.Millisecond))
	}
}
