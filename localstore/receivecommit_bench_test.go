package localstore

import (
	"path/filepath"
	"testing"

	"github.com/chatterm/chat/wire"
)

// BenchmarkReceiveCommit is what the session's receive path asks of the
// store for a small batch, as a steady stream brings them (4 messages): the
// put, then the cursor to ack and the sender's boundaries to show. Its
// per-commit costs are what BenchmarkPutMessageBurst's batches of 100 hide.
func BenchmarkReceiveCommit(b *testing.B) {
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	reportCPU(b)
	putInBatches(b, 4, func(ms []wire.Message) {
		receiveCommit(b, s, ms)
	})
}

// receiveCommit is what the session does with a batch: since session 21
// everything it needs comes from the put (before, it read the cursor and the
// sender's boundaries after the commit).
func receiveCommit(b *testing.B, s *Store, ms []wire.Message) {
	put, err := s.PutBatch(ctx, ms...)
	if err != nil || len(put.Senders) != 1 || put.Cursors[dm] != ms[len(ms)-1].SeqNo {
		b.Fatalf("put: %+v, %v", put, err)
	}
}
