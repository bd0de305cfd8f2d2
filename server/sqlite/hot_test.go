package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// TestHotStatementsFollowANewConnection has database/sql replace the writer's
// connection between sends: the send path's statements, prepared on the
// driver's connection, must be prepared again on the new one (and its pragmas
// set), or the sends after the change would fail or go nowhere.
func TestHotStatementsFollowANewConnection(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "chat.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	conv := CreateDirect(t, s, "a", "b")
	send := func(seq int64) {
		t.Helper()
		m := server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("m", seq), SenderID: "a", ReceiverID: "b", Content: fmt.Sprint("line ", seq), Timestamp: now}
		if err := s.AppendMessage(ctx, m, []string{"b"}); err != nil {
			t.Fatalf("send %d: %v", seq, err)
		}
	}
	send(1)
	first := s.wconn.current()
	// No idle connection may stay in the pool: each job batch gets a new one.
	s.w.SetMaxIdleConns(0)
	send(2)
	send(3)
	if s.wconn.current() == first {
		t.Fatal("the writer's connection was not replaced; the test proves nothing")
	}
	var cache int
	if err := s.w.QueryRow("PRAGMA cache_size").Scan(&cache); err != nil || cache != -16384 {
		t.Errorf("cache_size on the new connection = %d, %v; want -16384", cache, err)
	}
	got, err := s.ListMessages(ctx, conv, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d messages stored, want 3", len(got))
	}
	for i, m := range got {
		if want := int64(3 - i); m.SeqNo != want || m.Content != fmt.Sprint("line ", want) {
			t.Errorf("message %d: seq %d %q, want seq %d", i, m.SeqNo, m.Content, want)
		}
	}
	// A resend after the change is answered with its original: the lookup
	// statement was prepared again too.
	err = s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: 4, MessageID: "m2", SenderID: "a", ReceiverID: "b", Content: "again", Timestamp: now}, []string{"b"})
	if dup, ok := err.(*server.DuplicateError); !ok || dup.Original.SeqNo != 2 {
		t.Fatalf("resend of m2: %v, want the original at seq 2", err)
	}
}

// TestAssign covers the conversions the send path's row scans use, and that a
// column of another type is an error rather than a silent zero.
func TestAssign(t *testing.T) {
	var i64 int64
	var i int
	var str string
	for _, c := range []struct {
		dest, v any
		check   func() bool
	}{
		{&i64, int64(7), func() bool { return i64 == 7 }},
		{&i, int64(8), func() bool { return i == 8 }},
		{&str, "text", func() bool { return str == "text" }},
		{&str, []byte("blob"), func() bool { return str == "blob" }},
	} {
		if err := assign(c.dest, c.v); err != nil || !c.check() {
			t.Errorf("assign %T into %T: %v", c.v, c.dest, err)
		}
	}
	for _, c := range []struct{ dest, v any }{{&i64, "7"}, {&i, 1.5}, {&str, int64(1)}, {new(float64), int64(1)}} {
		if err := assign(c.dest, c.v); err == nil {
			t.Errorf("assign %T into %T: no error", c.v, c.dest)
		}
	}
}
