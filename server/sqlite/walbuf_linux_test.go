package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// TestWALFramesWrittenTogether stores one batch that dirties a hundred or so
// pages: with walbuf_linux.c its frames reach the file in a handful of writes (two
// per page without it), readers on their own connections see every row at once,
// and a store opened again on the same file finds them all. Without fsync at
// commit (NoSync) nothing but the commit frame makes walbuf_linux.c write its buffer
// before SQLite shows the transaction to readers.
func TestWALFramesWrittenTogether(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("nosync=%v", noSync), func(t *testing.T) { walFramesWrittenTogether(t, Options{NoSync: noSync}) })
	}
}

func walFramesWrittenTogether(t *testing.T, opt Options) {
	path := filepath.Join(t.TempDir(), "chat.db")
	s, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	ctx := context.Background()
	conv := CreateDirect(t, s, "a", "b")
	const n = 200
	msgs := make([]server.Message, n)
	for i := range msgs {
		msgs[i] = server.Message{ConversationID: conv, SeqNo: int64(i + 1), MessageID: fmt.Sprintf("m%03d", i), SenderID: "a", ReceiverID: "b",
			Content: fmt.Sprintf("%03d %s", i, strings.Repeat("x", 2000)), Timestamp: time.Now()}
	}
	before := walWrites()
	if _, err := s.AppendMessages(ctx, msgs, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	// About 110 pages of 4 KiB: 4 writes of up to 128 KiB, 220 without walbuf_linux.c.
	if writes := walWrites() - before; writes > 10 {
		t.Errorf("a commit of %d messages of 2 KB took %d WAL writes; want a few (two per page without walbuf_linux.c)", n, writes)
	}
	check := func(s *Store) {
		t.Helper()
		got, err := s.ListMessagesAfter(ctx, conv, 0, n+1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d messages read back, want %d", len(got), n)
		}
		for i, m := range got {
			if m.SeqNo != int64(i+1) || m.Content != msgs[i].Content {
				t.Fatalf("message %d: seq %d, content %.10q…; want seq %d, %.10q…", i, m.SeqNo, m.Content, i+1, msgs[i].Content)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, opt); err != nil {
		t.Fatal(err)
	}
	check(s)
}
