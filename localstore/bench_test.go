package localstore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chatterm/chat/wire"
)

// fill writes n messages spread over convs conversations.
func fill(tb testing.TB, s *Store, n, convs int) {
	tb.Helper()
	const batch = 2000
	var ms []wire.Message
	for i := 0; i < n; i++ {
		peer := fmt.Sprintf("u%03d", i%convs)
		ms = append(ms, msg(wire.DirectConversationID("me", peer), int64(i/convs+1), peer, "some message text of a usual length"))
		if len(ms) == batch || i == n-1 {
			if _, err := s.PutMessages(ctx, ms...); err != nil {
				tb.Fatal(err)
			}
			ms = ms[:0]
		}
	}
}

// BenchmarkOpenInbox measures what a client does on start: open a cache of
// 100,000 messages and read the first inbox screen.
func BenchmarkOpenInbox(b *testing.B) {
	path := filepath.Join(b.TempDir(), "cache.db")
	s, err := Open(ctx, path, Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	fill(b, s, 100_000, 200)
	s.Close()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(ctx, path, Options{UserID: "me"})
		if err != nil {
			b.Fatal(err)
		}
		es, err := s.Inbox(ctx, 50)
		if err != nil || len(es) != 50 {
			b.Fatalf("inbox: %d entries, %v", len(es), err)
		}
		s.Close()
	}
}

// BenchmarkHistoryPage reads a 50-message page from the middle of a
// conversation in a 100,000-message cache.
func BenchmarkHistoryPage(b *testing.B) {
	s := MustOpen(b)
	fill(b, s, 100_000, 10)
	conv := wire.DirectConversationID("me", "u003")
	b.ResetTimer()
	for b.Loop() {
		page, err := s.Messages(ctx, conv, 5000, 50)
		if err != nil || len(page) != 50 {
			b.Fatalf("page: %d, %v", len(page), err)
		}
	}
}

// BenchmarkPutMessage is the cache's part of a message arriving: one message
// stored in its own transaction (the search index's triggers included), as a
// live chat stores them.
func BenchmarkPutMessage(b *testing.B) {
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for i := range b.N {
		m := msg(dm, int64(i+1), "bob", fmt.Sprintf("message %d about the deployment of build %d on node %d", i, i/10, i%7))
		if _, err := s.PutMessages(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutMessageBurst is the same in bursts of 100 per transaction, as a
// busy chat's frames arrive; per message.
func BenchmarkPutMessageBurst(b *testing.B) {
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	ms := make([]wire.Message, 0, 100)
	for i := range b.N {
		ms = append(ms, msg(dm, int64(i+1), "bob", fmt.Sprintf("message %d about the deployment of build %d on node %d", i, i/10, i%7)))
		if len(ms) == cap(ms) || i == b.N-1 {
			if _, err := s.PutMessages(ctx, ms...); err != nil {
				b.Fatal(err)
			}
			ms = ms[:0]
		}
	}
}
