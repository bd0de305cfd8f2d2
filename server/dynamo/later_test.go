package dynamo_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// A group message whose pending rows do not all fit in its transaction is
// stored once the transaction commits, and answered so, even when the writes
// of the remaining rows fail (DynamoDB failing them for a while): they are
// retried in the background and arrive once DynamoDB takes them again.
func TestLargeGroupPendingRowsFailLater(t *testing.T) {
	target, err := url.Parse(endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var failing atomic.Bool
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte("pending_deliveries")) {
				refused.Add(1)
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected"}`)
				return
			}
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := open(t, dynamo.Options{Endpoint: srv.URL, CallTimeout: 30 * time.Second})
	ctx := context.Background()

	const n = 120
	var members []server.Participant
	var receivers []string
	for i := range n {
		u := fmt.Sprintf("u%03d", i)
		members = append(members, server.Participant{UserID: u, Role: wire.RoleMember, JoinedAt: t0})
		if i > 0 {
			receivers = append(receivers, u)
		}
	}
	must(t, s.CreateConversation(ctx, server.Conversation{ID: "g:big", Type: wire.Group, Name: "Big", CreatedAt: t0}, members))

	failing.Store(true)
	if err := s.AppendMessage(ctx, msg("g:big", 1, "u000"), receivers); err != nil {
		t.Fatalf("the transaction committed, yet the send failed: %v", err)
	}
	if refused.Load() == 0 {
		t.Fatal("no pending-row write was refused: the test did not test anything")
	}
	got, err := s.ListMessages(ctx, "g:big", 0, 10)
	must(t, err)
	if len(got) != 1 || got[0].SeqNo != 1 {
		t.Fatalf("stored messages %+v, want seq 1", got)
	}
	failing.Store(false)
	testenv.WaitFor(t, 20*time.Second, func() bool {
		for _, u := range receivers {
			pend, err := s.ListPending(ctx, u)
			if err != nil || len(pend) != 1 || pend[0].FirstUndeliveredSeq != 1 {
				return false
			}
		}
		return true
	})
}
