package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// TestArchiverTakesTurns: two nodes sharing a DynamoDB store, their archivers
// started together: one runs the pass, the other skips it, and keeps skipping
// while the holder renews; once the holder stops (its node died) and its lease
// expires, the other takes over. Every message reads back whole throughout.
// On the embedded store (one node) every pass runs.
func TestArchiverTakesTurns(t *testing.T) {
	for _, b := range mediaBackends {
		t.Run(b.name, func(t *testing.T) {
			store, blobs := b.open(t)
			_, shared := store.(server.Leaser)
			clk := &clock{now: time.Now()}
			var nodes [2]*server.Service
			for i := range nodes {
				nodes[i] = serviceOn(t, store, server.Config{SendRate: -1, Now: clk.Now, NodeID: fmt.Sprintf("node-%d", i),
					Backends: server.Backends{Blobs: blobs}})
			}
			registerAliceAndBob(t, nodes[0])
			ctx := context.Background()
			conv := wire.DirectConversationID("alice", "bob")
			if _, _, err := nodes[0].CreateConversation(ctx, "alice", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); err != nil {
				t.Fatal(err)
			}
			sent := 0
			send := func() {
				t.Helper()
				sent++
				if _, _, err := nodes[0].Send(ctx, "alice", conv, wire.SendRequest{MessageID: fmt.Sprint("m", sent), Content: fmt.Sprint("text ", sent)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			cold := store.(server.ColdStore)
			pass := func(i int) bool {
				t.Helper()
				ran, err := nodes[i].ArchivePass(ctx, cold, -time.Hour, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				return ran
			}
			// Every message archived, and read back with its text.
			archived := func() {
				t.Helper()
				h, err := nodes[1].History(ctx, "bob", conv, 0, 0, 50)
				if err != nil {
					t.Fatal(err)
				}
				if len(h.Messages) != sent {
					t.Fatalf("history has %d messages, want %d", len(h.Messages), sent)
				}
				for _, m := range h.Messages { // the n-th message sent is seq n
					if want := fmt.Sprint("text ", m.SeqNo); m.Content != want {
						t.Fatalf("message %d reads %q, want %q", m.SeqNo, m.Content, want)
					}
				}
				left, err := cold.ArchiveDue(ctx, clk.Now().Add(time.Hour), 10)
				if err != nil || len(left) != 0 {
					t.Fatalf("still due: %v, %v", left, err)
				}
			}

			send()
			send()
			var wg sync.WaitGroup
			var ran [2]bool
			for i := range nodes {
				wg.Go(func() { ran[i] = pass(i) })
			}
			wg.Wait()
			if !shared {
				if !ran[0] || !ran[1] {
					t.Fatalf("one node's passes ran %v, want all", ran)
				}
				archived()
				return
			}
			if ran[0] == ran[1] {
				t.Fatalf("two archivers started together ran %v; want exactly one", ran)
			}
			archived()
			holder, other := 0, 1
			if ran[1] {
				holder, other = 1, 0
			}

			send()
			clk.Add(time.Hour) // the next tick: the holder renews, the other skips
			if pass(other) {
				t.Fatal("the other node ran a pass while the holder's lease lasted")
			}
			if !pass(holder) {
				t.Fatal("the holder skipped its own next pass")
			}
			archived()

			send()
			clk.Add(time.Hour + 31*time.Minute) // the holder is gone: its lease (1.5 h) expired
			if !pass(other) {
				t.Fatal("the other node did not take over an expired lease")
			}
			archived()
			if pass(holder) {
				t.Fatal("the old holder ran a pass after its lease was taken over")
			}

			// A node that stops releases the lease: the next node need not
			// wait for its expiry.
			send()
			rctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { nodes[other].RunArchiver(rctx, -time.Hour, 10*time.Millisecond); close(done) }()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				left, err := cold.ArchiveDue(ctx, clk.Now().Add(time.Hour), 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the running archiver did not archive")
				}
			}
			stop()
			<-done
			if !pass(holder) {
				t.Fatal("a stopped node's lease held the others off")
			}
			archived()
		})
	}
}
