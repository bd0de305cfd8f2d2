package localstore

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// PRAGMA synchronous's values.
const (
	syncNormal = 1
	syncFullV  = 2
)

// Each write commits at the durability it needs (durability.go): what the
// server sent at NORMAL, the outbox at FULL, and the connection is back at
// FULL after a relaxed commit, whatever comes next.
func TestWriteDurability(t *testing.T) {
	s, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), Options{UserID: "me", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var level int
	s.beforeCommit = func(tx *sql.Tx) {
		if err := tx.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level); err != nil {
			t.Errorf("read synchronous inside the transaction: %v", err)
		}
	}
	connLevel := func() int {
		t.Helper()
		var n int
		if err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	writes := []struct {
		name  string
		want  int
		write func() error
	}{
		{"PutMessages", syncNormal, func() error { _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hi")); return err }},
		{"PutMessagesChecked", syncNormal, func() error { _, _, err := s.PutMessagesChecked(ctx, msg(dm, 2, "bob", "there")); return err }},
		{"ApplyStatuses", syncNormal, func() error {
			_, err := s.ApplyStatuses(ctx, StatusUpdate{ConversationID: dm, Status: wire.MemberStatus{UserID: "bob", LastReadSeq: 2}})
			return err
		}},
		{"Enqueue", syncFullV, func() error { _, err := s.Enqueue(ctx, dm, "m-1", "unsent words"); return err }},
		{"MarkRead", syncNormal, func() error {
			_, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "me", LastReadSeq: 2})
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			level = -1
			if err := w.write(); err != nil {
				t.Fatal(err)
			}
			if level != w.want {
				t.Errorf("committed at synchronous=%d, want %d", level, w.want)
			}
			if got := connLevel(); got != syncFullV {
				t.Errorf("the connection is left at synchronous=%d, want FULL (%d)", got, syncFullV)
			}
		})
	}
}

// A relaxed write that fails leaves the connection at FULL too, and nothing
// of it stored.
func TestWriteDurabilityAfterAFailure(t *testing.T) {
	s := MustOpen(t)
	// A trigger on this (the only) connection refuses the sender's boundary.
	if _, err := s.db.ExecContext(ctx, `CREATE TEMP TRIGGER fail_insert BEFORE INSERT ON member_status BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hi")); err == nil {
		t.Fatal("PutMessages succeeded through a trigger that refuses it")
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != syncFullV {
		t.Errorf("after a failed relaxed write the connection is at synchronous=%d, want FULL (%d)", n, syncFullV)
	}
	if got, err := s.Messages(ctx, dm, 0, 10); err != nil || len(got) != 0 {
		t.Errorf("cached after a failed write: %v, %v; want nothing", got, err)
	}
}
