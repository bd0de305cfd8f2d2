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

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// TestAdvanceStatusAnswerLost: DynamoDB applies a boundary move but its answer
// is lost, so the SDK sends the update again and that one fails its condition.
// The move still counts as made by this call (changed), so its status push is
// not lost.
func TestAdvanceStatusAnswerLost(t *testing.T) {
	target, err := url.Parse(endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var armed, dropped atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if armed.Load() && !dropped.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte("last_read_seq")) {
				dropped.Store(true)
				// Applied upstream; the caller hears nothing.
				req, _ := http.NewRequestWithContext(r.Context(), r.Method, target.String()+r.URL.Path, bytes.NewReader(body))
				req.Header = r.Header.Clone()
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
					c.Close()
				}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		forward.ServeHTTP(w, r)
	}))
	defer front.Close()

	s := open(t, dynamo.Options{Endpoint: front.URL, CallTimeout: 30 * time.Second})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := wire.DirectConversationID("alice", "bob")
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: now}, []server.Participant{
		{ConversationID: conv, UserID: "alice", Role: wire.RoleMember, JoinedAt: now},
		{ConversationID: conv, UserID: "bob", Role: wire.RoleMember, JoinedAt: now}}))
	for seq := int64(1); seq <= 2; seq++ {
		must(t, s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("m", seq),
			SenderID: "alice", ReceiverID: "bob", Content: "hi", Timestamp: now}, []string{"bob"}))
	}
	// A first move makes bob's row, so the one under test is a conditional update.
	_, _, err = s.AdvanceStatus(ctx, "bob", conv, 1, 0)
	must(t, err)
	armed.Store(true)
	st, changed, err := s.AdvanceStatus(ctx, "bob", conv, 2, 0)
	must(t, err)
	if !dropped.Load() {
		t.Fatal("no update answer was dropped: the test did not test anything")
	}
	if !changed || st.LastDeliveredSeq != 2 {
		t.Fatalf("after a lost answer: %+v changed=%v, want delivered 2 and changed", st, changed)
	}
}
