package localstore

import (
	"database/sql"
	"path/filepath"
	"slices"
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
// server sent at NORMAL without touching the connection's setting, every
// other write at FULL, and the connection is back at NORMAL afterwards,
// whatever comes next. Every write method is here: one that bypassed tx and
// rebuildableTx would commit no transaction the hook sees.
func TestWriteDurability(t *testing.T) {
	s, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), Options{UserID: "me", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var levels []int
	s.beforeCommit = func(tx *sql.Tx) {
		var level int
		if err := tx.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level); err != nil {
			t.Errorf("read synchronous inside the transaction: %v", err)
		}
		levels = append(levels, level)
	}
	var pragmas []string
	s.syncSet = func(stmt string) { pragmas = append(pragmas, stmt) }
	connLevel := func() int {
		t.Helper()
		var n int
		if err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	must := func(_ any, err error) error { return err }
	writes := []struct {
		name  string
		want  int
		write func() error
	}{
		{"PutMessages", syncNormal, func() error { return must(s.PutMessages(ctx, msg(dm, 1, "bob", "hi"))) }},
		{"PutMessagesChecked", syncNormal, func() error { _, _, err := s.PutMessagesChecked(ctx, msg(dm, 2, "bob", "there")); return err }},
		{"ApplyStatuses", syncNormal, func() error {
			return must(s.ApplyStatuses(ctx, StatusUpdate{ConversationID: dm, Status: wire.MemberStatus{UserID: "bob", LastReadSeq: 2}}))
		}},
		{"MarkRead", syncNormal, func() error {
			return must(s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "me", LastReadSeq: 2}))
		}},
		{"Enqueue", syncFullV, func() error { return must(s.Enqueue(ctx, dm, "m-1", "unsent words")) }},
		{"NoteAttempt", syncFullV, func() error { return s.NoteAttempt(ctx, "m-1") }},
		{"FailSend", syncFullV, func() error { return s.FailSend(ctx, "m-1", wire.Errorf(wire.CodeInvalid, "no")) }},
		{"Discard", syncFullV, func() error { return s.Discard(ctx, "m-1") }},
		{"EnqueueAgain", syncFullV, func() error { return must(s.Enqueue(ctx, dm, "m-2", "more words")) }},
		{"CompleteSends", syncFullV, func() error {
			return must(s.CompleteSends(ctx, wire.SendResponse{ConversationID: dm, SeqNo: 3, MessageID: "m-2", Timestamp: t0}))
		}},
		{"SetDrafts", syncFullV, func() error { return s.SetDrafts(ctx, map[string]string{dm: "half a thought"}) }},
		{"AddInput", syncFullV, func() error { return s.AddInput(ctx, dm, "sent once") }},
		{"PutInbox", syncFullV, func() error {
			return s.PutInbox(ctx, wire.InboxEntry{ConversationID: dm, Type: wire.Direct, LastSeq: 3})
		}},
		{"PutConversation", syncFullV, func() error {
			return s.PutConversation(ctx, wire.Conversation{ConversationID: "g:1", Type: wire.Group, Name: "g"})
		}},
		{"RemoveMember", syncFullV, func() error { return s.RemoveMember(ctx, "g:1", "bob") }},
		{"MarkLeftUnlisted", syncFullV, func() error { return must(s.MarkLeftUnlisted(ctx, []string{"g:1"}, []string{"g:1"})) }},
		{"AdvanceCursor", syncFullV, func() error { return s.AdvanceCursor(ctx, dm, 3) }},
		{"IndexQueued", syncFullV, func() error { return must(s.IndexQueued(ctx, 100)) }},
		{"ApplyRollback", syncFullV, func() error { return must(s.ApplyRollback(ctx, Rollback{ConversationID: dm, Last: 3})) }},
		{"ResetState", syncFullV, func() error { return s.ResetState(ctx, dm) }},
		{"SetStoreID", syncFullV, func() error { return s.SetStoreID(ctx, "store-1") }},
		{"TrimMessages", syncFullV, func() error { return must(s.TrimMessages(ctx, dm, 2)) }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			levels, pragmas = nil, nil
			if err := w.write(); err != nil {
				t.Fatal(err)
			}
			if len(levels) != 1 || levels[0] != w.want {
				t.Errorf("committed at synchronous=%v, want one commit at %d", levels, w.want)
			}
			// A relaxed write leaves the setting alone; a durable one raises
			// it and lowers it again.
			wantPragmas := []string(nil)
			if w.want == syncFullV {
				wantPragmas = []string{syncFull, syncRelaxed}
			}
			if !slices.Equal(pragmas, wantPragmas) {
				t.Errorf("issued %q, want %q", pragmas, wantPragmas)
			}
			if got := connLevel(); got != syncNormal {
				t.Errorf("the connection is left at synchronous=%d, want NORMAL (%d)", got, syncNormal)
			}
		})
	}
}

// A durable write that fails leaves the connection at NORMAL, and nothing of
// it stored; a relaxed one that fails stores nothing either.
func TestWriteDurabilityAfterAFailure(t *testing.T) {
	s := MustOpen(t)
	// Triggers on this (the only) connection refuse a sender's boundary and an outbox entry.
	for _, trig := range []string{
		`CREATE TEMP TRIGGER fail_status BEFORE INSERT ON member_status BEGIN SELECT RAISE(ABORT, 'refused'); END`,
		`CREATE TEMP TRIGGER fail_outbox BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'refused'); END`,
	} {
		if _, err := s.db.ExecContext(ctx, trig); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hi")); err == nil {
		t.Fatal("PutMessages succeeded through a trigger that refuses it")
	}
	if _, err := s.Enqueue(ctx, dm, "m-1", "unsent"); err == nil {
		t.Fatal("Enqueue succeeded through a trigger that refuses it")
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != syncNormal {
		t.Errorf("after failed writes the connection is at synchronous=%d, want NORMAL (%d)", n, syncNormal)
	}
	if got, err := s.Messages(ctx, dm, 0, 10); err != nil || len(got) != 0 {
		t.Errorf("cached after a failed write: %v, %v; want nothing", got, err)
	}
	if got, err := s.Outbox(ctx, dm); err != nil || len(got) != 0 {
		t.Errorf("queued after a failed write: %v, %v; want nothing", got, err)
	}
}
