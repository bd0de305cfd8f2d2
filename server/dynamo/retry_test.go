package dynamo_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// answerFault opens a store through a proxy in front of the test DynamoDB
// that, once armed, applies the first request of the given operation whose
// body contains marker and then answers the caller with fault, given the
// hijacked connection and the real answer: the write is made, and what the
// caller hears is up to fault (the connection is closed after it). calls
// counts the requests of that operation with marker that reached the proxy
// while armed.
func answerFault(t *testing.T, op, marker string, fault func(c net.Conn, resp *http.Response, answer []byte)) (s *dynamo.Store, armed *atomic.Bool, calls *atomic.Int32) {
	t.Helper()
	target, err := url.Parse(endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	armed, calls = new(atomic.Bool), new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if armed.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(marker)) && calls.Add(1) == 1 {
				req, _ := http.NewRequestWithContext(r.Context(), r.Method, target.String()+r.URL.Path, bytes.NewReader(body))
				req.Header = r.Header.Clone()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
					fault(c, resp, answer)
					c.Close()
				}
				return
			}
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return open(t, dynamo.Options{Endpoint: srv.URL, CallTimeout: 30 * time.Second}), armed, calls
}

// answerLost is answerFault that drops the answer (closes the connection), as
// a network failure after the write would.
func answerLost(t *testing.T, op, marker string) (s *dynamo.Store, armed *atomic.Bool, calls *atomic.Int32) {
	t.Helper()
	return answerFault(t, op, marker, func(net.Conn, *http.Response, []byte) {})
}

// aliceAndBob creates their direct conversation and returns its id.
func aliceAndBob(t *testing.T, s *dynamo.Store, now time.Time) string {
	t.Helper()
	conv := wire.DirectConversationID("alice", "bob")
	must(t, s.CreateConversation(context.Background(), server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: now}, []server.Participant{
		{ConversationID: conv, UserID: "alice", Role: wire.RoleMember, JoinedAt: now},
		{ConversationID: conv, UserID: "bob", Role: wire.RoleMember, JoinedAt: now}}))
	return conv
}

// TestAdvanceStatusAnswerLost: DynamoDB applies a boundary move but its answer
// is lost, so the SDK sends the update again and that one fails its condition.
// The move still counts as made by this call (changed), so its status push is
// not lost.
func TestAdvanceStatusAnswerLost(t *testing.T) {
	s, armed, calls := answerLost(t, "UpdateItem", "last_read_seq")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := aliceAndBob(t, s, now)
	for seq := int64(1); seq <= 2; seq++ {
		must(t, s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("m", seq),
			SenderID: "alice", ReceiverID: "bob", Content: "hi", Timestamp: now}, []string{"bob"}))
	}
	// A first move makes bob's row, so the one under test is a conditional update.
	_, _, err := s.AdvanceStatus(ctx, "bob", conv, 1, 0)
	must(t, err)
	armed.Store(true)
	st, changed, err := s.AdvanceStatus(ctx, "bob", conv, 2, 0)
	must(t, err)
	if calls.Load() == 0 {
		t.Fatal("no update answer was dropped: the test did not test anything")
	}
	if !changed || st.LastDeliveredSeq != 2 {
		t.Fatalf("after a lost answer: %+v changed=%v, want delivered 2 and changed", st, changed)
	}
}

// TestAppendBatchAnswerLost: a batch's transaction commits but its answer is
// lost, so the SDK sends it again. The batch is stored once and reported
// stored, not as resends of itself. (DynamoDB would answer the resent
// transaction by its ClientRequestToken; moto does not — a transaction sent
// twice with one token fails its conditions the second time — so here the
// resend takes resolveBatch's own-write branch.)
func TestAppendBatchAnswerLost(t *testing.T) {
	s, armed, calls := answerLost(t, "TransactWriteItems", "batch-2")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := aliceAndBob(t, s, now)
	var batch []server.Message
	for seq := int64(1); seq <= 3; seq++ {
		batch = append(batch, server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("batch-", seq),
			SenderID: "alice", ReceiverID: "bob", Content: "hi", Timestamp: now})
	}
	armed.Store(true)
	dups, err := s.AppendMessages(ctx, batch, []string{"bob"})
	must(t, err)
	if calls.Load() == 0 {
		t.Fatal("no transaction answer was dropped: the test did not test anything")
	}
	for i, d := range dups {
		if d != nil {
			t.Fatalf("message %d reported as a resend of %+v: the batch's own first attempt", i, d.Original)
		}
	}
	got, err := s.ListMessages(ctx, conv, 0, 10)
	must(t, err)
	if len(got) != 3 || got[0].SeqNo != 3 || got[2].SeqNo != 1 {
		t.Fatalf("stored %+v, want seq 3, 2, 1", got)
	}
}

// TestNextSeqAnswerLost: the fallback counter's write is applied but its
// answer lost, so the SDK sends it again. The number is handed out once: no
// gap in seq_no (a blind ADD counted twice here).
func TestNextSeqAnswerLost(t *testing.T) {
	s, armed, calls := answerLost(t, "UpdateItem", "counter")
	ctx := context.Background()
	conv := aliceAndBob(t, s, time.Now().UTC().Truncate(time.Millisecond))
	first, err := s.NextSeq(ctx, conv)
	must(t, err)
	armed.Store(true)
	second, err := s.NextSeq(ctx, conv)
	must(t, err)
	if calls.Load() == 0 {
		t.Fatal("no counter answer was dropped: the test did not test anything")
	}
	third, err := s.NextSeq(ctx, conv)
	must(t, err)
	if second != first+1 || third != first+2 {
		t.Fatalf("numbers %d, %d, %d: want consecutive across a lost answer", first, second, third)
	}
}
