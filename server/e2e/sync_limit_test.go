package e2e

import (
	"net/http"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// A sync over the WebSocket reads history as GET /history does, so it counts
// against the same per-user limit: refused, it is answered with a
// rate_limited error frame carrying a retry hint, then "synced" with more
// (what a client already retries after the hint), and nothing is sent for it.
// Without the limit one user read 771 pages a second over 8 connections.
func TestSyncCountsAgainstTheHistoryLimit(t *testing.T) {
	const n = 3
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.Limits = server.UserLimits{History: n}
	}))
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	alice.send(conv, "m1", "hello")
	ws := dial(t, alice)

	// syncOnce sends one sync and returns its error frame, or nil when it was
	// served (its message came, then "synced").
	syncOnce := func() *wire.Error {
		t.Helper()
		id := ws.id()
		ws.write(wire.Frame{Type: wire.TypeSync, ID: id, Cursors: []wire.Cursor{{ConversationID: conv}}})
		var refused *wire.Error
		got := 0
		for {
			f := ws.next(func(f wire.Frame) bool { return f.ID == id || f.Type == wire.TypeMessage })
			switch {
			case f.Type == wire.TypeMessage:
				got++
			case f.Type == wire.TypeError:
				refused = f.Error
			case f.Type == wire.TypeSynced:
				if refused != nil && (!f.More || got != 0) {
					t.Fatalf("a refused sync: synced more=%v after %d messages; want more and none", f.More, got)
				}
				if refused == nil && got != 1 {
					t.Fatalf("a served sync sent %d messages, want 1", got)
				}
				return refused
			}
		}
	}
	// 2n+1 syncs in a row span at most two one-second windows.
	var refused *wire.Error
	for range 2*n + 1 {
		if refused = syncOnce(); refused != nil {
			break
		}
	}
	if refused == nil {
		t.Fatalf("%d syncs in a row, none refused (history limit %d a second)", 2*n+1, n)
	}
	if refused.Code != wire.CodeRateLimited || refused.RetryAfterMs <= 0 || refused.RetryAfterMs > 1000 {
		t.Fatalf("sync refused with %+v, want rate_limited with a retry hint ≤ 1 s", refused)
	}
	// bob's reads are his own.
	if st := bob.do("GET", "/v1/conversations/"+conv+"/messages", nil, nil); st != http.StatusOK {
		t.Fatalf("bob's history while alice is limited: %d", st)
	}

	// One budget for both paths: pages read over HTTP until refused leave no
	// sync in the same window. A window may end between the two calls, so the
	// pair is tried a few times.
	for try := 0; ; try++ {
		for alice.do("GET", "/v1/conversations/"+conv+"/messages", nil, &wire.ErrorResponse{}) != http.StatusTooManyRequests {
		}
		if e := syncOnce(); e != nil && e.Code == wire.CodeRateLimited {
			break
		}
		if try == 3 {
			t.Fatal("a sync right after HTTP history was refused was served, four times: syncs have a budget of their own")
		}
	}
}
