package redis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailru/easyjson"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/wire"
)

// TestInboxCopyExpiresWithTheInboxTTL: a copy lasts InboxTTL (the
// --inbox-ttl knob) from its last Save, as the inbox index does from its last
// read, and then answers nothing.
func TestInboxCopyExpiresWithTheInboxTTL(t *testing.T) {
	const ttl = 400 * time.Millisecond
	x := client(t, redis.Options{InboxTTL: ttl}).InboxCopies()
	ctx := context.Background()
	entries := []server.CopiedEntry{{ConvID: "dm:a:b", Data: []byte(`{}`)}}
	if err := x.Save(ctx, "a", entries, true); err != nil {
		t.Fatal(err)
	}
	if got, err := x.Load(ctx, "a"); err != nil || len(got) != 1 {
		t.Fatalf("Load after Save = %v, %v", got, err)
	}
	testenv.WaitFor(t, 10*time.Second, func() bool {
		got, err := x.Load(ctx, "a")
		return err == nil && len(got) == 0
	})
}

// BenchmarkInboxCopy is the Redis work an inbox copy adds to an inbox read
// (one Save of the answer's entries) beside the read's own Redis call (Top
// of the inbox index), for answers of 50 and 500 conversations, entries as
// the wire encodes them with an 80-byte preview. payload-B is what a Save
// sends; redis-B is the copy's MEMORY USAGE.
func BenchmarkInboxCopy(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{50, 500} {
		c := client(b, redis.Options{})
		x, ix := c.InboxCopies(), c.InboxIndex()
		at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
		entries := make([]server.CopiedEntry, n)
		fill := make([]server.InboxEntry, n)
		payload := 0
		for i := range entries {
			id := fmt.Sprintf("g:%026d", i)
			e := wire.InboxEntry{ConversationID: id, Type: wire.Group, Name: "team " + id[20:], LastSeq: 1000 + int64(i),
				LastMessageBody: strings.Repeat("x", 80), LastMessageSender: "someone", LastMessageAt: at.Add(time.Duration(i) * time.Second),
				LastDeliveredSeq: 990, LastReadSeq: 980, Unread: 20}
			data, err := easyjson.Marshal(e)
			if err != nil {
				b.Fatal(err)
			}
			entries[i] = server.CopiedEntry{ConvID: id, Data: data}
			fill[i] = server.InboxEntry{Conversation: server.Conversation{ID: id, LastMessageAt: e.LastMessageAt}}
			payload += len(id) + len(data)
		}
		if err := ix.Fill(ctx, "u", fill); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("top/entries=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := ix.Top(ctx, "u", n); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("save/entries=%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := x.Save(ctx, "u", entries, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(payload), "payload-B")
			mem, err := c.Universal().MemoryUsage(ctx, c.Prefix()+"inboxcopy:{u}").Result()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(mem), "redis-B")
		})
	}
}
