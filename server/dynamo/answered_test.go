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

// answerCut opens a store through a proxy in front of the test DynamoDB that,
// once armed, applies the first request of the given operation whose body
// contains marker and answers it with the real status and headers but only
// half the body, then closes the connection: the write is made and answered
// 200, and the caller cannot read the answer. calls counts the requests of
// that operation with marker that reached the proxy while armed. (The SDK's
// error is "unexpected EOF" here, which it does not retry; against moto under
// load it was "use of closed network connection", which it does. Both are
// answers with status 200, which is all answeredWrites looks at.)
func answerCut(t *testing.T, op, marker string) (s *dynamo.Store, armed *atomic.Bool, calls *atomic.Int32) {
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
				c, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				defer c.Close()
				fmt.Fprintf(c, "HTTP/1.1 %d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
				resp.Header.Del("Content-Length")
				resp.Header.Write(c)
				fmt.Fprintf(c, "Content-Length: %d\r\n\r\n", len(answer))
				c.Write(answer[:len(answer)/2])
				return
			}
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return open(t, dynamo.Options{Endpoint: srv.URL, CallTimeout: 30 * time.Second}), armed, calls
}

// A transaction answered 200 whose answer is cut short is not sent again: it
// was applied, and a resend would fail its own condition on a server that does
// not deduplicate by ClientRequestToken ("already exists" for the conversation
// this very call created).
func TestTransactionAnsweredButUnread(t *testing.T) {
	s, armed, calls := answerCut(t, "TransactWriteItems", "dm:carol:dave")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := wire.DirectConversationID("carol", "dave")
	armed.Store(true)
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: now}, []server.Participant{
		{ConversationID: conv, UserID: "carol", Role: wire.RoleMember, JoinedAt: now},
		{ConversationID: conv, UserID: "dave", Role: wire.RoleMember, JoinedAt: now}}))
	if n := calls.Load(); n != 1 {
		t.Fatalf("the transaction reached DynamoDB %d times, want once", n)
	}
	if _, err := s.GetParticipant(ctx, conv, "dave"); err != nil {
		t.Fatalf("the transaction answered 200 was not applied: %v", err)
	}
}

// The same for a conditional single-item write (a new member's PutItem).
func TestSingleWriteAnsweredButUnread(t *testing.T) {
	s, armed, calls := answerCut(t, "PutItem", "erin")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	g := server.Conversation{ID: "g:answered", Type: wire.Group, Name: "g", CreatedAt: now}
	must(t, s.CreateConversation(ctx, g, []server.Participant{{ConversationID: g.ID, UserID: "carol", Role: wire.RoleAdmin, JoinedAt: now}}))
	armed.Store(true)
	must(t, s.AddParticipants(ctx, g.ID, []server.Participant{{ConversationID: g.ID, UserID: "erin", Role: wire.RoleMember, JoinedAt: now}}))
	if n := calls.Load(); n != 1 {
		t.Fatalf("the put reached DynamoDB %d times, want once", n)
	}
	if _, err := s.GetParticipant(ctx, g.ID, "erin"); err != nil {
		t.Fatalf("the put answered 200 was not applied: %v", err)
	}
}

// A read whose answer is cut short is not taken for an empty success: its
// answer is what the caller asked for. (The SDK does not send it again either:
// a cut answer is not among the errors it retries.)
func TestReadAnsweredButUnreadFails(t *testing.T) {
	s, armed, calls := answerCut(t, "GetItem", "g:read")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	g := server.Conversation{ID: "g:read", Type: wire.Group, Name: "read me", CreatedAt: now}
	must(t, s.CreateConversation(ctx, g, []server.Participant{{ConversationID: g.ID, UserID: "carol", Role: wire.RoleAdmin, JoinedAt: now}}))
	armed.Store(true)
	c, err := s.GetConversation(ctx, g.ID)
	if err == nil || calls.Load() != 1 {
		t.Fatalf("read %+v, %v in %d requests, want an error after one", c, err, calls.Load())
	}
}
