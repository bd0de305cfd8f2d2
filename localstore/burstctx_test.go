package localstore

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"testing"

	"github.com/chatterm/chat/wire"
)

// BenchmarkPutMessageBurstLive is BenchmarkPutMessageBurst under a context
// that can be cancelled, as a session's is.
func BenchmarkPutMessageBurstLive(b *testing.B) {
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Open(live, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	reportCPU(b)
	putInBatches(b, 100, func(ms []wire.Message) {
		if _, err := s.PutMessages(live, ms...); err != nil {
			b.Fatal(err)
		}
	})
}

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A session's context can always end, and go-sqlite3 runs a statement
// under such a context in a goroutine of its own: a receive commit's rows
// (messages, boundaries) take their statements without one, so storing
// 200 messages or applying 200 boundaries starts a few goroutines for the
// transaction, not one a row. A context that has ended still stores
// nothing.
func TestBurstRowsStartNoGoroutineEach(t *testing.T) {
	s := MustOpen(t, Options{UserID: "me"})
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 200
	var ms []wire.Message
	var sts []StatusUpdate
	for i := range n {
		ms = append(ms, msg(dm, int64(i+1), "bob", fmt.Sprint("burst ", i)))
		sts = append(sts, StatusUpdate{ConversationID: dm, Status: wire.MemberStatus{UserID: "carol", LastDeliveredSeq: int64(i + 1)}})
	}
	before := goroutinesCreated()
	added, err := s.PutMessages(live, ms...)
	if err != nil || len(added) != n {
		t.Fatalf("stored %d of %d: %v", len(added), n, err)
	}
	if got := goroutinesCreated() - before; got >= n/4 {
		t.Fatalf("storing %d messages started %d goroutines, want a few for the transaction", n, got)
	}
	before = goroutinesCreated()
	changed, err := s.ApplyStatuses(live, sts...)
	if err != nil || !changed[n-1] {
		t.Fatalf("boundaries: %v, the last changed %v", err, changed[n-1])
	}
	if got := goroutinesCreated() - before; got >= n/4 {
		t.Fatalf("applying %d boundaries started %d goroutines, want a few for the transaction", n, got)
	}

	cancel()
	if _, err := s.PutMessages(live, msg(dm, n+1, "bob", "after the end")); err == nil {
		t.Fatal("a message stored under a context that had ended")
	}
	if page, err := s.Messages(context.Background(), dm, 0, 1); err != nil || page[0].SeqNo != n {
		t.Fatalf("the newest cached is %+v (%v), want %d", page, err, n)
	}
}
