package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// BenchmarkSendAndAck is the store's share of one message on the hot path: the
// send transaction and the receiver's ack, from 200 concurrent connections, each
// in its own direct conversation (seq numbers of one conversation are stored in
// order, as the server's per-conversation lock ensures), so that group commit
// batches them as it does in the server.
//
//	go test -run '^$' -bench SendAndAck -benchtime 3s ./server/sqlite/
func BenchmarkSendAndAck(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("nosync=%v", noSync), func(b *testing.B) { sendAndAck(b, sqlite.Options{NoSync: noSync}, 1) })
	}
}

// BenchmarkSendBatchAndAck is BenchmarkSendAndAck in the shape the server now
// writes under load: each connection's queued sends stored as one batch
// (AppendMessages, 8 messages) and the receiver's acks folded into one.
//
//	go test -run '^$' -bench SendBatchAndAck -benchtime 100000x ./server/sqlite/
func BenchmarkSendBatchAndAck(b *testing.B) { sendAndAck(b, sqlite.Options{}, 8) }

// sendAndAck has one writer per conversation store batch messages at a time
// (AppendMessage when batch is 1) and ack them, until b.N messages are stored,
// and reports the CPU per message: the figure to compare on a shared machine.
func sendAndAck(b *testing.B, opt sqlite.Options, batch int) {
	const convs = 200
	st, ids := benchStore(b, opt, convs)
	ctx := context.Background()
	now := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	for w := range convs {
		wg.Go(func() {
			a, r := fmt.Sprintf("a%d", w), fmt.Sprintf("b%d", w)
			seq := int64(0)
			for next.Add(int64(batch)) <= int64(b.N) {
				msgs := make([]server.Message, batch)
				for k := range msgs {
					seq++
					msgs[k] = server.Message{ConversationID: ids[w], SeqNo: seq, MessageID: fmt.Sprint("m", seq), SenderID: a, ReceiverID: r,
						Content: "a chat line of about the length people type, give or take a few words", Timestamp: now}
				}
				var err error
				if batch == 1 {
					err = st.AppendMessage(ctx, msgs[0], []string{r})
				} else {
					_, err = st.AppendMessages(ctx, msgs, []string{r})
				}
				if err != nil {
					b.Error(err)
					return
				}
				if _, _, err := st.AdvanceStatus(ctx, r, ids[w], seq, 0); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/msg")
}

// benchStore opens a store for a benchmark, closed when it ends, holding convs
// direct conversations, the i-th between a<i> and b<i>; it returns their ids.
func benchStore(b *testing.B, opt sqlite.Options, convs int) (*sqlite.Store, []string) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "chat.db"), opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	now := time.Now()
	ids := make([]string, convs)
	for i := range ids {
		a, r := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		ids[i] = wire.DirectConversationID(a, r)
		if err := st.CreateConversation(context.Background(), server.Conversation{ID: ids[i], Type: wire.Direct, CreatedAt: now},
			[]server.Participant{{ConversationID: ids[i], UserID: a}, {ConversationID: ids[i], UserID: r}}); err != nil {
			b.Fatal(err)
		}
	}
	return st, ids
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
