package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
)

// Paging through history faster than the server's per-user limit waits out
// its retry hints instead of failing: the TUI going back many pages, and
// `chat fetch` filling a conversation, read every page.
func TestHistoryPagingWaitsOutTheLimit(t *testing.T) {
	const limit = 3
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.Limits = server.UserLimits{History: limit, Inbox: limit}
	}))
	alice := register(t, srv, "alice")
	register(t, srv, "bob")
	conv := direct(t, alice, "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	for i := range 3*limit + 1 {
		if _, err := alice.History(ctx, conv, 0, 10); err != nil {
			t.Fatalf("history page %d: %v", i, err)
		}
		if _, err := alice.Inbox(ctx, 0); err != nil {
			t.Fatalf("inbox %d: %v", i, err)
		}
	}
	// 10 pages at 3 a second need at least three windows to pass.
	if d := time.Since(start); d < 2*time.Second {
		t.Fatalf("10 pages at a limit of 3 a second took %v: the limit did not hold", d)
	}
	// A caller that will not wait for the hint is told why at once.
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	var err error
	for range 2*limit + 1 {
		if _, err = alice.History(short, conv, 0, 10); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("7 pages in 100 ms at a limit of 3 a second all served")
	}
}
