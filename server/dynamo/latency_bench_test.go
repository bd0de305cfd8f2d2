package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// BenchmarkCallLatency measures single DynamoDB calls against the test
// server (moto) at 1 and 8 at once: the distribution --dynamodb-timeout is
// chosen from (docs/dynamodb.md, "The call timeout"). Each call's own time,
// its SDK retries included, is reported as p50, p99, p99.9 and the maximum.
//
//	go test ./server/dynamo -run '^$' -bench CallLatency -benchtime 400x
func BenchmarkCallLatency(b *testing.B) {
	s := open(b, dynamo.Options{})
	ctx := context.Background()
	if err := s.PutToken(ctx, server.Token{Hash: "h", UserID: "ann", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	conv := wire.DirectConversationID("ann", "bob")
	t0 := time.Now()
	if err := s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: t0},
		[]server.Participant{{ConversationID: conv, UserID: "ann", Role: wire.RoleMember, JoinedAt: t0}, {ConversationID: conv, UserID: "bob", Role: wire.RoleMember, JoinedAt: t0}}); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	calls := map[string]func(i int) error{
		"GetItem": func(int) error { _, err := s.GetToken(ctx, "h"); return err },
		"PutItem": func(i int) error {
			return s.PutToken(ctx, server.Token{Hash: fmt.Sprintf("h%d", i), UserID: "ann", ExpiresAt: time.Now().Add(time.Hour)})
		},
		// A direct message: one TransactWriteItems of 4 items.
		"Send": func(int) error {
			n := seq.Add(1)
			return s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: n, MessageID: fmt.Sprintf("m%d", n), SenderID: "ann",
				ReceiverID: "bob", Content: "hello", Timestamp: time.Now()}, []string{"bob"})
		},
	}
	for _, name := range []string{"GetItem", "PutItem", "Send"} {
		for _, workers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/%d", name, workers), func(b *testing.B) {
				lat := make([]time.Duration, b.N)
				var wg sync.WaitGroup
				next := make(chan int)
				errs := make(chan error, workers)
				for range workers {
					wg.Go(func() {
						for i := range next {
							start := time.Now()
							if err := calls[name](i); err != nil {
								errs <- err
							}
							lat[i] = time.Since(start)
						}
					})
				}
				b.ResetTimer()
				for i := range b.N {
					next <- i
				}
				close(next)
				wg.Wait()
				b.StopTimer()
				select {
				case err := <-errs:
					b.Fatal(err)
				default:
				}
				slices.Sort(lat)
				q := func(p float64) float64 {
					return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
				}
				b.ReportMetric(q(0.5), "p50-ms")
				b.ReportMetric(q(0.99), "p99-ms")
				b.ReportMetric(q(0.999), "p99.9-ms")
				b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
			})
		}
	}
}
