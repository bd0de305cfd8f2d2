package localstore

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	reportCPU(b)
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
	reportCPU(b)
	putInBatches(b, 100, func(ms []wire.Message) {
		if _, err := s.PutMessages(ctx, ms...); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkSearch100k searches a cache of 100,000 messages (issue 17: under
// 50 ms at the 99th percentile), for a word in one message in 50 and for a
// rare one, with the index brought up to date beforehand.
func BenchmarkSearch100k(b *testing.B) {
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, convs = 100_000, 50
	var ms []wire.Message
	for i := range n {
		peer := fmt.Sprintf("u%03d", i%convs)
		text := fmt.Sprintf("status update %d from the build farm, nothing to see", i)
		switch {
		case i%50 == 0:
			text = fmt.Sprintf("the deployment of build %d failed on node %d", i, i%7)
		case i == n/2+1:
			text = "where is the quarterly invoice spreadsheet"
		}
		ms = append(ms, msg(wire.DirectConversationID("me", peer), int64(i/convs+1), peer, text))
		if len(ms) == 2000 {
			if _, err := s.PutMessages(ctx, ms...); err != nil {
				b.Fatal(err)
			}
			ms = ms[:0]
		}
	}
	if _, err := s.Search(ctx, "warm", "", 1); err != nil { // indexes the queue
		b.Fatal(err)
	}
	for _, q := range []string{"deployment failed", "invoice", "deploy"} {
		b.Run(q, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				hits, err := s.Search(ctx, q, "", 50)
				if err != nil || len(hits) == 0 {
					b.Fatalf("%q: %d hits, %v", q, len(hits), err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkSearchConversation50k searches one conversation of 50,000 cached
// messages beside 50,000 in others, as `chat search --with` and the TUI's `/`
// in a chat do: a word in every message of every conversation (the newest 50
// of 50,000 hits shown), and a word in one message. The conversation filter
// once ran as a scan of the conversation with a full-text probe per row:
// 2.7 s to a minute.
func BenchmarkSearchConversation50k(b *testing.B) {
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cache.db"), Options{UserID: "me"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, big = 100_000, "dm:bob:me"
	var ms []wire.Message
	for i := range n {
		// Pages arrive newest first, as the TUI and chat fetch load them:
		// the index's order is not the messages' order.
		j := n - 1 - i
		conv, seq, peer := big, int64(j/2+1), "bob"
		if j%2 == 1 {
			peer = fmt.Sprintf("u%03d", j%49)
			conv, seq = wire.DirectConversationID("me", peer), int64(j/98+1)
		}
		text := fmt.Sprintf("seed message %d of the benchmark, nothing to see", j)
		if j == n/2 {
			text = "where is the quarterly invoice spreadsheet"
		}
		ms = append(ms, msg(conv, seq, peer, text))
		if len(ms) == 2000 {
			if _, err := s.PutMessages(ctx, ms...); err != nil {
				b.Fatal(err)
			}
			ms = ms[:0]
		}
	}
	if _, err := s.Search(ctx, "warm", "", 1); err != nil { // indexes the queue
		b.Fatal(err)
	}
	for _, q := range []string{"seed", "invoice"} {
		b.Run(q, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				hits, err := s.Search(ctx, q, big, 50)
				if err != nil || len(hits) == 0 || hits[0].Message.ConversationID != big {
					b.Fatalf("%q: %d hits, %v", q, len(hits), err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// putInBatches hands put b.N messages from bob into dm, numbered from 1, in
// batches of size (the last one shorter): a stream's receive commits, or a
// burst's.
func putInBatches(b *testing.B, size int, put func(ms []wire.Message)) {
	b.Helper()
	ms := make([]wire.Message, 0, size)
	for i := range b.N {
		ms = append(ms, msg(dm, int64(i+1), "bob", fmt.Sprintf("message %d about the deployment of build %d on node %d", i, i/10, i%7)))
		if len(ms) == size || i == b.N-1 {
			put(ms)
			ms = ms[:0]
		}
	}
}
