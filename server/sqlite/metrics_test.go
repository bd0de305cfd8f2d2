package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
)

// TestWriterCounters checks the writer's /metrics counters against writes whose
// count is known: appends one at a time are one commit each, and appends made
// at once are each counted as a job however the writer grouped them.
func TestWriterCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "chat.db"), sqlite.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	read := func() (commits, jobs, busy float64) {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range families {
			got[f.GetName()] = f.GetMetric()[0].GetCounter().GetValue()
		}
		return got["chat_store_commits_total"], got["chat_store_commit_jobs_total"], got["chat_store_writer_busy_seconds_total"]
	}
	ctx := context.Background()
	conv := sqlite.CreateDirect(t, s, "a", "b")
	msg := func(seq int64) server.Message {
		return server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("m", seq), SenderID: "a", ReceiverID: "b", Content: "hi", Timestamp: time.Now()}
	}

	c0, j0, b0 := read()
	for seq := int64(1); seq <= 50; seq++ {
		if err := s.AppendMessage(ctx, msg(seq), []string{"b"}); err != nil {
			t.Fatal(err)
		}
	}
	c1, j1, b1 := read()
	if c1-c0 != 50 || j1-j0 != 50 {
		t.Fatalf("50 appends one after another: %v commits and %v jobs counted, want 50 and 50", c1-c0, j1-j0)
	}
	if b1 <= b0 {
		t.Fatalf("writer busy time did not grow over 50 commits: %v → %v s", b0, b1)
	}

	// Appends made at once race for seq_nos; the losers are refused and tried
	// again, each try a job of its own. Count the tries.
	const n = 200
	var mu sync.Mutex
	next, tries := int64(50), 0
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				mu.Lock()
				next++
				seq := next
				tries++
				mu.Unlock()
				if err := s.AppendMessage(ctx, msg(seq), []string{"b"}); err == nil {
					return
				}
			}
		})
	}
	wg.Wait()
	c2, j2, _ := read()
	if j2-j1 != float64(tries) {
		t.Fatalf("%d appends made at once (%d tries): %v jobs counted", n, tries, j2-j1)
	}
	if c2-c1 < 1 || c2-c1 > float64(tries) {
		t.Fatalf("%d jobs in %v commits", tries, c2-c1)
	}
	t.Logf("%d appends at once: %v jobs in %v commits", n, j2-j1, c2-c1)
}
