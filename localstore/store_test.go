package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
	"os"
)

var ctx = context.Background()

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func msg(conv string, seq int64, sender, content string) wire.Message {
	return wire.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprintf("m-%s-%d", conv, seq),
		SenderID: sender, Content: content, Timestamp: t0.Add(time.Duration(seq) * time.Second)}
}

const dm = "dm:bob:me" // wire.DirectConversationID("me", "bob")

func seqs(ms []wire.Message) []int64 {
	var out []int64
	for _, m := range ms {
		out = append(out, m.SeqNo)
	}
	return out
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func cursor(t *testing.T, s *Store, conv string) int64 {
	t.Helper()
	c, _, err := s.Cursor(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpen(t *testing.T) {
	t.Run("OKOwnerOnly", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cache.db")
		// A cache an earlier version left readable by everyone is narrowed too.
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644) // whatever the umask
		s, err := Open(ctx, path, Options{UserID: "me"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hi")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
			}
		}
	})
	t.Run("OK", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "a", "b", "cache.db")
		s, err := Open(ctx, path, Options{UserID: "me"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hi")); err != nil {
			t.Fatal(err)
		}
		s.Close()
		// Reopening runs no migration twice and keeps the data.
		s, err = Open(ctx, path, Options{UserID: "me"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		m, err := s.Message(ctx, dm, 1)
		if err != nil || m.Content != "hi" || !m.Timestamp.Equal(t0.Add(time.Second)) {
			t.Fatalf("after reopen: %+v, %v", m, err)
		}
	})
	t.Run("OKMemory", func(t *testing.T) {
		s, err := Open(ctx, ":memory:", Options{UserID: "me"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hi")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Message(ctx, dm, 1); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrNoUser", func(t *testing.T) {
		_, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), Options{})
		if wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("err = %v, want invalid", err)
		}
	})
	t.Run("OKUpgradesVersion1", func(t *testing.T) {
		// A cache written before attachments existed (schema 1) opens, and
		// keeps its messages.
		path := filepath.Join(t.TempDir(), "cache.db")
		raw, err := sql.Open("sqlite3", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		v1, _ := migrations.ReadFile("migrations/0001_init.sql")
		if _, err := raw.Exec(string(v1) + `; PRAGMA user_version = 1;
			INSERT INTO messages VALUES ('dm:bob:me', 1, 'old', 'bob', 'from before', 5);
			INSERT INTO outbox (message_id, conversation_id, content, created_at) VALUES ('q', 'dm:bob:me', 'queued', 5);`); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		s, err := Open(ctx, path, Options{UserID: "me"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		m, err := s.Message(ctx, dm, 1)
		if err != nil || m.Content != "from before" || m.Attachment != "" {
			t.Fatalf("old message: %+v %v", m, err)
		}
		if es, err := s.Outbox(ctx, ""); err != nil || len(es) != 1 || es[0].Content != "queued" {
			t.Fatalf("old outbox: %+v %v", es, err)
		}
	})
	t.Run("ErrNewerSchema", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cache.db")
		s, err := Open(ctx, path, Options{UserID: "me"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec("PRAGMA user_version = 99"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err = Open(ctx, path, Options{UserID: "me"})
		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("err = %v, want a newer-schema error", err)
		}
	})
}

func TestPutMessages(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := MustOpen(t)
		added, err := s.PutMessages(ctx, msg(dm, 1, "bob", "one"), msg(dm, 2, "me", "two"))
		if err != nil {
			t.Fatal(err)
		}
		if !equal(seqs(added), []int64{1, 2}) {
			t.Fatalf("added %v", seqs(added))
		}
		// The same messages again, as a redelivery: nothing is new.
		added, err = s.PutMessages(ctx, msg(dm, 2, "me", "two"), msg(dm, 1, "bob", "one"), msg(dm, 3, "bob", "three"))
		if err != nil {
			t.Fatal(err)
		}
		if !equal(seqs(added), []int64{3}) {
			t.Fatalf("redelivery added %v, want [3]", seqs(added))
		}
		got, err := s.Messages(ctx, dm, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(seqs(got), []int64{3, 2, 1}) {
			t.Fatalf("messages %v, want newest first", seqs(got))
		}
		e, err := s.InboxEntry(ctx, dm)
		if err != nil {
			t.Fatal(err)
		}
		// My reply at 2 implies I read up to 2; bob's 3 is unread.
		if e.Type != wire.Direct || e.Peer != "bob" || e.LastSeq != 3 || e.LastMessageBody != "three" ||
			e.LastReadSeq != 2 || e.Unread != 1 {
			t.Fatalf("inbox entry %+v", e)
		}
	})
	t.Run("OKCursorStopsAtGap", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.PutMessages(ctx, msg(dm, 5, "bob", "a"), msg(dm, 6, "bob", "b"), msg(dm, 9, "bob", "c")); err != nil {
			t.Fatal(err)
		}
		// The first message seen starts the cursor; 7 and 8 are missing.
		if c := cursor(t, s, dm); c != 6 {
			t.Fatalf("cursor %d, want 6", c)
		}
		if _, err := s.PutMessages(ctx, msg(dm, 8, "bob", "d")); err != nil {
			t.Fatal(err)
		}
		if c := cursor(t, s, dm); c != 6 {
			t.Fatalf("cursor %d, want 6 while 7 is missing", c)
		}
		if n, err := s.LatestSeq(ctx, dm); err != nil || n != 9 {
			t.Fatalf("latest %d %v, want 9", n, err)
		}
		if _, err := s.PutMessages(ctx, msg(dm, 7, "bob", "e")); err != nil {
			t.Fatal(err)
		}
		if c := cursor(t, s, dm); c != 9 {
			t.Fatalf("cursor %d, want 9 once the gap is filled", c)
		}
		// An older history page does not move the cursor back.
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "old")); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Cursors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0] != (wire.Cursor{ConversationID: dm, SeqNo: 9}) {
			t.Fatalf("cursors %+v", cs)
		}
	})
	t.Run("OKAdvanceCursor", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "a"), msg(dm, 5, "bob", "b"), msg(dm, 6, "bob", "b")); err != nil {
			t.Fatal(err)
		}
		if err := s.AdvanceCursor(ctx, dm, 4); err != nil {
			t.Fatal(err)
		}
		if c := cursor(t, s, dm); c != 6 {
			t.Fatalf("cursor %d, want 6", c)
		}
		if err := s.AdvanceCursor(ctx, dm, 2); err != nil {
			t.Fatal(err)
		}
		if c := cursor(t, s, dm); c != 6 {
			t.Fatalf("cursor moved back to %d", c)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := MustOpen(t)
		bad := msg(dm, 0, "bob", "zero")
		_, err := s.PutMessages(ctx, msg(dm, 1, "bob", "good"), bad)
		if wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("err = %v, want invalid", err)
		}
		// Nothing of the batch was stored.
		if _, err := s.Message(ctx, dm, 1); !errors.Is(err, ErrNotFound) {
			t.Fatalf("message 1: %v, want not found", err)
		}
		if _, err := s.PutMessages(ctx, msg("nope", 1, "bob", "x")); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("bad conversation id: %v", err)
		}
	})
}

func TestMessagesPaging(t *testing.T) {
	s := MustOpen(t)
	var batch []wire.Message
	for i := int64(1); i <= 30; i++ {
		batch = append(batch, msg(dm, i, "bob", "x"))
	}
	if _, err := s.PutMessages(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		page, err := s.Messages(ctx, dm, 11, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(seqs(page), []int64{10, 9, 8}) {
			t.Fatalf("before 11: %v", seqs(page))
		}
		after, err := s.MessagesAfter(ctx, dm, 27, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(seqs(after), []int64{28, 29, 30}) {
			t.Fatalf("after 27: %v", seqs(after))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := s.Message(ctx, dm, 31); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
		page, err := s.Messages(ctx, "g:other", 0, 10)
		if err != nil || len(page) != 0 {
			t.Fatalf("unknown conversation: %v, %v", page, err)
		}
	})
}

func TestApplyStatus(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.PutMessages(ctx, msg(dm, 1, "me", "a"), msg(dm, 2, "me", "b"), msg(dm, 3, "me", "c")); err != nil {
			t.Fatal(err)
		}
		changed, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 2})
		if err != nil || !changed {
			t.Fatalf("changed=%v err=%v", changed, err)
		}
		// Read implies delivered.
		if _, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "bob", LastReadSeq: 3}); err != nil {
			t.Fatal(err)
		}
		d, r, err := s.PeerBoundaries(ctx, dm)
		if err != nil || d != 3 || r != 3 {
			t.Fatalf("peer boundaries %d %d %v, want 3 3", d, r, err)
		}
		// Boundaries never move back.
		changed, err = s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 1, LastReadSeq: 1})
		if err != nil || changed {
			t.Fatalf("lowering: changed=%v err=%v", changed, err)
		}
		d, r, _ = s.PeerBoundaries(ctx, dm)
		if d != 3 || r != 3 {
			t.Fatalf("lowered to %d %d", d, r)
		}
	})
	t.Run("OKOwnStatusSetsUnread", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "a"), msg(dm, 2, "bob", "b"), msg(dm, 3, "bob", "c")); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.InboxEntry(ctx, dm); e.Unread != 3 {
			t.Fatalf("unread %d, want 3", e.Unread)
		}
		// Read on another device of mine.
		if _, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "me", LastReadSeq: 2}); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.InboxEntry(ctx, dm); e.Unread != 1 || e.LastReadSeq != 2 || e.LastDeliveredSeq != 2 {
			t.Fatalf("entry %+v, want unread 1", e)
		}
	})
	t.Run("OKGroupTakesMinimum", func(t *testing.T) {
		s := MustOpen(t)
		g := "g:team"
		err := s.PutConversation(ctx, wire.Conversation{ConversationID: g, Type: wire.Group, Name: "team", CreatedAt: t0,
			Participants: []wire.Participant{{UserID: "me"}, {UserID: "bob"}, {UserID: "carol"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyStatus(ctx, g, wire.MemberStatus{UserID: "bob", LastReadSeq: 5}); err != nil {
			t.Fatal(err)
		}
		// carol is known from the participants, at 0: nothing is read by everyone.
		if d, r, _ := s.PeerBoundaries(ctx, g); d != 0 || r != 0 {
			t.Fatalf("boundaries %d %d, want 0 0", d, r)
		}
		if _, err := s.ApplyStatus(ctx, g, wire.MemberStatus{UserID: "carol", LastDeliveredSeq: 4}); err != nil {
			t.Fatal(err)
		}
		if d, r, _ := s.PeerBoundaries(ctx, g); d != 4 || r != 0 {
			t.Fatalf("boundaries %d %d, want 4 0", d, r)
		}
		if err := s.RemoveMember(ctx, g, "carol"); err != nil {
			t.Fatal(err)
		}
		if d, r, _ := s.PeerBoundaries(ctx, g); d != 5 || r != 5 {
			t.Fatalf("without carol %d %d, want 5 5", d, r)
		}
	})
	t.Run("OKBatch", func(t *testing.T) {
		s := MustOpen(t)
		changed, err := s.ApplyStatuses(ctx,
			StatusUpdate{dm, wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 3}},
			StatusUpdate{dm, wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 2}}, // behind: no change
			StatusUpdate{"bad", wire.MemberStatus{UserID: "bob", LastDeliveredSeq: 9}},
			StatusUpdate{dm, wire.MemberStatus{UserID: "bob", LastReadSeq: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if !equal(changed, []bool{true, false, false, true}) {
			t.Fatalf("changed %v", changed)
		}
		if d, r, _ := s.PeerBoundaries(ctx, dm); d != 3 || r != 3 {
			t.Fatalf("boundaries %d %d", d, r)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{LastReadSeq: 1}); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("no user: %v", err)
		}
		if _, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "bob", LastReadSeq: -1}); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("negative: %v", err)
		}
		if sts, _ := s.Statuses(ctx, dm); len(sts) != 0 {
			t.Fatalf("stored %+v", sts)
		}
	})
}

func TestInbox(t *testing.T) {
	// The server counts messages; seq_nos a failed write took are gaps that
	// must not show as unread, here or after live messages and reads.
	t.Run("OKUnreadCountsMessages", func(t *testing.T) {
		s := MustOpen(t)
		unread := func() int64 {
			t.Helper()
			e, err := s.InboxEntry(ctx, "g:team")
			if err != nil {
				t.Fatal(err)
			}
			return e.Unread
		}
		if err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: "g:team", Type: wire.Group, LastSeq: 40, LastReadSeq: 30, Unread: 7}); err != nil {
			t.Fatal(err)
		}
		if n := unread(); n != 7 {
			t.Fatalf("unread %d, want the server's 7 (three of the ten numbers are gaps)", n)
		}
		if _, err := s.PutMessages(ctx, msg("g:team", 41, "bob", "live")); err != nil {
			t.Fatal(err)
		}
		if n := unread(); n != 8 {
			t.Fatalf("unread %d after one more message, want 8", n)
		}
		if _, err := s.ApplyStatus(ctx, "g:team", wire.MemberStatus{UserID: "me", LastReadSeq: 41}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutMessages(ctx, msg("g:team", 42, "bob", "after reading")); err != nil {
			t.Fatal(err)
		}
		if n := unread(); n != 1 {
			t.Fatalf("unread %d after reading all and one new message, want 1", n)
		}
	})
	t.Run("OK", func(t *testing.T) {
		s := MustOpen(t)
		dmCarol := wire.DirectConversationID("me", "carol")
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "old")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutMessages(ctx, msg(dmCarol, 7, "carol", "newer")); err != nil {
			t.Fatal(err)
		}
		err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: "g:team", Type: wire.Group, Name: "team", LastSeq: 40,
			LastMessageBody: "newest", LastMessageSender: "dave", LastMessageAt: t0.Add(time.Hour), LastReadSeq: 38, Unread: 2})
		if err != nil {
			t.Fatal(err)
		}
		es, err := s.Inbox(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range es {
			ids = append(ids, e.ConversationID)
		}
		if !equal(ids, []string{"g:team", dmCarol, dm}) {
			t.Fatalf("inbox order %v", ids)
		}
		if es[0].Unread != 2 || es[0].Name != "team" || es[1].Peer != "carol" {
			t.Fatalf("entries %+v", es)
		}
		if es, _ := s.Inbox(ctx, 1); len(es) != 1 {
			t.Fatalf("limit 1 gave %d", len(es))
		}
	})
	t.Run("OKStaleServerAnswerKeepsNewer", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "a"), msg(dm, 2, "bob", "b")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyStatus(ctx, dm, wire.MemberStatus{UserID: "me", LastReadSeq: 2}); err != nil {
			t.Fatal(err)
		}
		// The server's inbox was read before message 2 arrived.
		if err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: dm, LastSeq: 1, LastMessageBody: "a", LastReadSeq: 0}); err != nil {
			t.Fatal(err)
		}
		e, err := s.InboxEntry(ctx, dm)
		if err != nil {
			t.Fatal(err)
		}
		if e.LastSeq != 2 || e.LastMessageBody != "b" || e.LastReadSeq != 2 || e.Unread != 0 || e.Peer != "bob" {
			t.Fatalf("entry %+v", e)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := MustOpen(t)
		if _, err := s.InboxEntry(ctx, dm); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
		if err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: "bad"}); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("bad id: %v", err)
		}
	})
}

func TestOutbox(t *testing.T) {
	clock := t0
	newStore := func(t *testing.T) *Store {
		return MustOpen(t, Options{UserID: "me", Now: func() time.Time { return clock }})
	}
	t.Run("OK", func(t *testing.T) {
		s := newStore(t)
		e1, err := s.Enqueue(ctx, dm, "id-1", "first")
		if err != nil {
			t.Fatal(err)
		}
		if !e1.CreatedAt.Equal(t0) {
			t.Fatalf("created %v, want the injected clock", e1.CreatedAt)
		}
		if _, err := s.Enqueue(ctx, "g:team", "id-2", "second"); err != nil {
			t.Fatal(err)
		}
		// A retried enqueue is harmless.
		if _, err := s.Enqueue(ctx, dm, "id-1", "first"); err != nil {
			t.Fatal(err)
		}
		all, err := s.Outbox(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || all[0].MessageID != "id-1" || all[1].MessageID != "id-2" {
			t.Fatalf("outbox %+v", all)
		}
		if n, _ := s.Unsent(ctx); n != 2 {
			t.Fatalf("unsent %d", n)
		}
		if err := s.NoteAttempt(ctx, "id-1"); err != nil {
			t.Fatal(err)
		}
		m, first, err := s.CompleteSend(ctx, wire.SendResponse{ConversationID: dm, SeqNo: 4, MessageID: "id-1", Timestamp: t0})
		if err != nil || !first {
			t.Fatalf("first answer: first=%v err=%v", first, err)
		}
		if m.SenderID != "me" || m.Content != "first" || m.SeqNo != 4 {
			t.Fatalf("stored %+v", m)
		}
		if got, err := s.Message(ctx, dm, 4); err != nil || got.MessageID != "id-1" {
			t.Fatalf("cached %+v %v", got, err)
		}
		if rest, _ := s.Outbox(ctx, dm); len(rest) != 0 {
			t.Fatalf("outbox still holds %+v", rest)
		}
		// The answer arriving twice returns the same message.
		again, first, err := s.CompleteSend(ctx, wire.SendResponse{ConversationID: dm, SeqNo: 4, MessageID: "id-1", Timestamp: t0})
		if err != nil || first || again.Content != "first" {
			t.Fatalf("second answer: %+v first=%v %v", again, first, err)
		}
		if e, _ := s.InboxEntry(ctx, dm); e.LastSeq != 4 || e.Unread != 0 {
			t.Fatalf("inbox after own send %+v", e)
		}
	})
	t.Run("OKFailSend", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Enqueue(ctx, dm, "id-1", "x"); err != nil {
			t.Fatal(err)
		}
		if err := s.FailSend(ctx, "id-1", wire.Errorf(wire.CodeTooLarge, "too big")); err != nil {
			t.Fatal(err)
		}
		es, _ := s.Outbox(ctx, dm)
		if len(es) != 1 || es[0].Err == nil || es[0].Err.Code != wire.CodeTooLarge {
			t.Fatalf("outbox %+v", es)
		}
		if n, _ := s.Unsent(ctx); n != 0 {
			t.Fatalf("unsent %d, want 0", n)
		}
		if err := s.Discard(ctx, "id-1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OKAttachment", func(t *testing.T) {
		s := newStore(t)
		const media = "media/me/abcdefghijklmnop0123"
		if _, err := s.EnqueueEntry(ctx, OutboxEntry{ConversationID: dm, MessageID: "pic", Attachment: media}); err != nil {
			t.Fatal(err)
		}
		m, first, err := s.CompleteSend(ctx, wire.SendResponse{ConversationID: dm, SeqNo: 1, MessageID: "pic", Timestamp: t0})
		if err != nil || !first || m.Attachment != media || m.Content != "" {
			t.Fatalf("completed %+v %v %v", m, first, err)
		}
		if got, _ := s.Message(ctx, dm, 1); got.Attachment != media {
			t.Fatalf("cached %+v", got)
		}
		if e, _ := s.InboxEntry(ctx, dm); e.LastMessageBody != "[attachment]" {
			t.Fatalf("preview %q", e.LastMessageBody)
		}
		if _, err := s.EnqueueEntry(ctx, OutboxEntry{ConversationID: dm, MessageID: "bad", Attachment: "../etc/passwd"}); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("bad attachment: %v", err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Enqueue(ctx, dm, "id-1", "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(ctx, dm, "id-1", "y"); wire.ErrorCode(err) != wire.CodeConflict {
			t.Fatalf("err = %v, want conflict", err)
		}
		es, _ := s.Outbox(ctx, "")
		if len(es) != 1 || es[0].Content != "x" {
			t.Fatalf("outbox %+v", es)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := newStore(t)
		for _, c := range []struct{ conv, id, content string }{
			{dm, "", "x"}, {dm, "has space", "x"}, {dm, "id", ""}, {"nope", "id", "x"},
		} {
			if _, err := s.Enqueue(ctx, c.conv, c.id, c.content); wire.ErrorCode(err) != wire.CodeInvalid {
				t.Errorf("Enqueue(%q, %q, %q) = %v, want invalid", c.conv, c.id, c.content, err)
			}
		}
		if n, _ := s.Unsent(ctx); n != 0 {
			t.Fatalf("unsent %d", n)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := newStore(t)
		if _, _, err := s.CompleteSend(ctx, wire.SendResponse{ConversationID: dm, SeqNo: 1, MessageID: "never"}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("complete: %v", err)
		}
		if err := s.FailSend(ctx, "never", wire.Errorf(wire.CodeInvalid, "x")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("fail: %v", err)
		}
		if err := s.Discard(ctx, "never"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("discard: %v", err)
		}
	})
}

// The inbox is read on every start: it must walk the index, never sort.
func TestInboxQueryPlanUsesIndex(t *testing.T) {
	s := MustOpen(t)
	joined := queryPlan(t, s, `SELECT `+inboxColumns+` FROM inbox
		ORDER BY last_message_at DESC, conversation_id LIMIT 50`)
	if !strings.Contains(joined, "inbox_by_activity") || strings.Contains(joined, "TEMP B-TREE") {
		t.Fatalf("inbox query plan: %s", joined)
	}
}

// What arrives close together is stored in one call (the session's batch):
// messages of two conversations interleaved, one sent twice in the batch and
// one already cached, a gap in one conversation, a mention in the other.
// Each conversation ends as if its messages had come one by one.
func TestPutMessagesBatchAcrossConversations(t *testing.T) {
	s := MustOpen(t)
	const grp = "g:crew"
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "cached")); err != nil {
		t.Fatal(err)
	}
	mention := msg(grp, 2, "carol", "@me look")
	mention.Mentions = []string{"me"}
	batch := []wire.Message{
		msg(grp, 1, "carol", "hello all"),
		msg(dm, 1, "bob", "cached"), // redelivered: the server missed our ack
		msg(dm, 2, "bob", "two"),
		mention,
		msg(dm, 2, "bob", "two"),  // twice in one batch
		msg(dm, 4, "bob", "four"), // 3 is missing
	}
	added, err := s.PutMessages(ctx, batch...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range added {
		got = append(got, fmt.Sprintf("%s/%d", m.ConversationID, m.SeqNo))
	}
	if want := []string{grp + "/1", dm + "/2", grp + "/2", dm + "/4"}; !equal(got, want) {
		t.Fatalf("added %v, want %v: the new ones, once each, in arrival order", got, want)
	}
	if c := cursor(t, s, dm); c != 2 {
		t.Errorf("direct cursor %d, want 2 (3 is missing)", c)
	}
	if c := cursor(t, s, grp); c != 2 {
		t.Errorf("group cursor %d, want 2", c)
	}
	e, err := s.InboxEntry(ctx, dm)
	if err != nil {
		t.Fatal(err)
	}
	if e.LastSeq != 4 || e.LastMessageBody != "four" || e.Unread != 4 {
		t.Errorf("direct inbox %+v, want last 4 \"four\", 4 unread (3 too: on the server, not here yet)", e)
	}
	g, err := s.InboxEntry(ctx, grp)
	if err != nil {
		t.Fatal(err)
	}
	if g.LastSeq != 2 || g.Unread != 2 || g.Mentions != 1 {
		t.Errorf("group inbox %+v, want last 2, 2 unread, 1 mention", g)
	}
	ms, err := s.Mentions(ctx, 10)
	if err != nil || len(ms) != 1 || ms[0].SeqNo != 2 || ms[0].ConversationID != grp {
		t.Errorf("mentions %v, %v: want the group's message 2", ms, err)
	}
}
