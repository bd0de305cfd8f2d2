package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// CreateDirect creates the direct conversation of a and b for a test (this
// package's and sqlite_test's) and returns its id.
func CreateDirect(tb testing.TB, s *Store, a, b string) string {
	tb.Helper()
	now := time.Now()
	conv := wire.DirectConversationID(a, b)
	if err := s.CreateConversation(context.Background(), server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: now}, []server.Participant{
		{ConversationID: conv, UserID: a, Role: wire.RoleMember, JoinedAt: now},
		{ConversationID: conv, UserID: b, Role: wire.RoleMember, JoinedAt: now}}); err != nil {
		tb.Fatal(err)
	}
	return conv
}
