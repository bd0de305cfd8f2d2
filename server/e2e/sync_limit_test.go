package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

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

// One sync answer carries no more messages than the history limit allows:
// a page per wire.MaxPageSize messages is taken before they are read, and a
// sync the limit stops there is answered "synced" with more, the rest after
// the hint. Charged after they were sent, one answer a second carried up to
// 1,000 messages whatever the limit.
func TestSyncAnswerStaysWithinTheHistoryLimit(t *testing.T) {
	const total = wire.MaxPageSize + wire.MaxPageSize/2
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.Limits = server.UserLimits{History: 1}
	}))
	alice, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	ws := dial(t, alice)
	var ids []string
	for i := range total {
		ids = append(ids, ws.send(conv, fmt.Sprintf("m%d", i), "hello"))
	}
	for _, id := range ids {
		if f := ws.next(func(f wire.Frame) bool { return f.ID == id }); f.Type != wire.TypeSent {
			t.Fatalf("send answered %+v", f)
		}
	}

	// syncFrom answers how many messages one sync from after carried, the
	// last seq_no, whether it said more, and its error.
	syncFrom := func(after int64) (n int, last int64, more bool, refused *wire.Error) {
		t.Helper()
		id := ws.id()
		ws.write(wire.Frame{Type: wire.TypeSync, ID: id, Cursors: []wire.Cursor{{ConversationID: conv, SeqNo: after}}})
		for {
			f := ws.next(func(f wire.Frame) bool { return f.ID == id || isMessage(conv)(f) })
			switch f.Type {
			case wire.TypeMessage:
				n++
				last = max(last, f.Message.SeqNo)
			case wire.TypeError:
				refused = f.Error
			case wire.TypeSynced:
				return n, last, f.More, refused
			}
		}
	}
	// The limit's window is a fixed second: one that ends during the sync
	// lets it take a page from the next. So a few tries, a window apart.
	for try := 0; ; try++ {
		time.Sleep(1100 * time.Millisecond)
		n, last, more, refused := syncFrom(0)
		if refused != nil {
			t.Fatalf("the first sync of a window refused: %+v", refused)
		}
		t.Logf("try %d: one sync answer carried %d of %d messages (more=%v); limit 1 page of %d a second", try, n, total, more, wire.MaxPageSize)
		if n == wire.MaxPageSize && more {
			// The rest comes after the hint.
			_, _, _, refused = syncFrom(last)
			if refused == nil || refused.Code != wire.CodeRateLimited || refused.RetryAfterMs <= 0 {
				t.Fatalf("a sync right after the limit stopped one: %+v; want rate_limited with a hint", refused)
			}
			time.Sleep(time.Duration(refused.RetryAfterMs) * time.Millisecond)
			n, _, more, refused = syncFrom(last)
			if refused != nil || more || n != total-wire.MaxPageSize {
				t.Fatalf("after the hint: %d messages, more=%v, %+v; want the other %d, complete", n, more, refused, total-wire.MaxPageSize)
			}
			return
		}
		if try == 3 {
			t.Fatalf("one sync answer carried %d messages (more=%v) four times, with a history limit of one page (%d messages) a second; want %d and more",
				n, more, wire.MaxPageSize, wire.MaxPageSize)
		}
	}
}
