package dynamo_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// answerCut is answerFault that answers with the real status and headers but
// only half the body: the write is made and answered 200, and the caller
// cannot read the answer. (The SDK's error is "unexpected EOF" here, which it
// does not retry; against moto under load it was "use of closed network
// connection", which it does. Both are answers with status 200, which is all
// answeredWrites looks at.)
func answerCut(t *testing.T, op, marker string) (s *dynamo.Store, armed *atomic.Bool, calls *atomic.Int32) {
	t.Helper()
	return answerFault(t, op, marker, func(c net.Conn, resp *http.Response, answer []byte) {
		fmt.Fprintf(c, "HTTP/1.1 %d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
		resp.Header.Del("Content-Length")
		resp.Header.Write(c)
		fmt.Fprintf(c, "Content-Length: %d\r\n\r\n", len(answer))
		c.Write(answer[:len(answer)/2])
	})
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
