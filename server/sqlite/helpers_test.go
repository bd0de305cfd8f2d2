package sqlite

import (
	"context"
	"database/sql"
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

// FillQueue holds the store's writer in a job and fills its queue with jobs
// that do nothing, so that the next write finds no room; release lets them
// all run.
func FillQueue(s *Store) (release func()) {
	started, hold := make(chan struct{}), make(chan struct{})
	s.enqueue(context.Background(), func(*sql.Tx) error {
		close(started)
		<-hold
		return nil
	})
	<-started
	for {
		select {
		case s.jobs <- &job{fn: func(*sql.Tx) error { return nil }, done: make(chan struct{})}:
			continue
		default:
		}
		break
	}
	return func() { close(hold) }
}
