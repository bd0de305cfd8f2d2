package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// due lists the conversations ArchiveDue gives at cutoff, by id.
func due(t *testing.T, cold server.ColdStore, cutoff time.Time) map[string]int64 {
	t.Helper()
	got, err := cold.ArchiveDue(context.Background(), cutoff, 100)
	must(t, err)
	out := map[string]int64{}
	for _, d := range got {
		out[d.ConversationID] = d.ArchivedThrough
	}
	return out
}

// testArchiveDue: the index of conversations with rows after their
// watermark. A conversation is due once it has rows, until its watermark
// reaches its last row; the time of its next row keeps it out until then;
// the watermark never moves down; a row stored after the archiver read the
// last one keeps the conversation due; events count as rows.
func testArchiveDue(t *testing.T, s server.Store, cold server.ColdStore) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	other, members2 := direct("alice", "carol")
	must(t, s.CreateConversation(ctx, other, members2))
	late := t0.Add(time.Hour)
	if got := due(t, cold, late); len(got) != 0 {
		t.Fatalf("conversations without rows are due: %v", got)
	}
	for i := int64(1); i <= 4; i++ {
		must(t, s.AppendMessage(ctx, msg(c.ID, i, "alice", "bob"), nil)) // t0+1s … t0+4s
	}
	if got := due(t, cold, late); len(got) != 1 || got[c.ID] != 0 {
		t.Fatalf("due after four sends: %v; want %s through 0", got, c.ID)
	}
	if got, err := cold.ArchiveDue(ctx, late, 0); err != nil || len(got) != 0 {
		t.Fatalf("limit 0: %v, %v", got, err)
	}

	// Archived through 2; the next row is at t0+3s.
	must(t, cold.AdvanceArchive(ctx, c.ID, 2, t0.Add(3*time.Second)))
	if got := due(t, cold, t0.Add(3*time.Second)); len(got) != 0 {
		t.Fatalf("due before its next row is old: %v", got)
	}
	if got := due(t, cold, t0.Add(3*time.Second+1)); got[c.ID] != 2 {
		t.Fatalf("due once its next row is old: %v; want through 2", got)
	}
	must(t, cold.AdvanceArchive(ctx, c.ID, 1, t0.Add(2*time.Second))) // an archiver behind another
	if got := due(t, cold, late); got[c.ID] != 2 {
		t.Fatalf("the watermark moved down: %v", got)
	}

	// Archived through its last row: no longer due.
	must(t, cold.AdvanceArchive(ctx, c.ID, 4, time.Time{}))
	if got := due(t, cold, late.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("due when archived through its last row: %v", got)
	}
	// A send puts it back, from the watermark.
	must(t, s.AppendMessage(ctx, msg(c.ID, 5, "alice", "bob"), nil))
	if got := due(t, cold, late); len(got) != 1 || got[c.ID] != 4 {
		t.Fatalf("due after a send to an archived conversation: %v; want through 4", got)
	}
	// An archiver that read up to 5, claiming nothing follows, while 6 was
	// being stored: 6 keeps it due.
	must(t, s.AppendMessage(ctx, msg(c.ID, 6, "alice", "bob"), nil))
	must(t, cold.AdvanceArchive(ctx, c.ID, 5, time.Time{}))
	if got := due(t, cold, late); got[c.ID] != 5 {
		t.Fatalf("a row stored after the archiver's read was dropped from the index: %v", got)
	}
	must(t, cold.AdvanceArchive(ctx, c.ID, 6, time.Time{}))
	// An event is a row like any other.
	must(t, s.AppendMessage(ctx, event(c.ID, 7, "bob", wire.KindReaction, 1, 0, "👍"), []string{"alice"}))
	if got := due(t, cold, late); got[c.ID] != 6 {
		t.Fatalf("an event did not make its conversation due: %v", got)
	}
	// Several conversations, and the limit.
	must(t, s.AppendMessage(ctx, msg(other.ID, 1, "alice", "carol"), nil))
	if got := due(t, cold, late); len(got) != 2 {
		t.Fatalf("two conversations with rows: %v", got)
	}
	if got, err := cold.ArchiveDue(ctx, late, 1); err != nil || len(got) != 1 {
		t.Fatalf("limit 1: %v, %v", got, err)
	}
	wantErr(t, cold.AdvanceArchive(ctx, "nosuch", 1, time.Time{}), server.ErrNotFound)
}

// testColdStore: MarkArchived moves a message's or an event's content out
// of the row, only as listed.
func testColdStore(t *testing.T, s server.Store, cold server.ColdStore) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	for i := int64(1); i <= 3; i++ {
		must(t, s.AppendMessage(ctx, msg(c.ID, i, "alice", "bob"), nil))
	}
	must(t, s.AppendMessage(ctx, event(c.ID, 4, "alice", wire.KindEdit, 3, 0, "a long enough new text for message three"), nil))
	rows, err := s.ListMessagesAfter(ctx, c.ID, 0, 10)
	must(t, err)
	for _, m := range rows[:2] {
		must(t, cold.MarkArchived(ctx, m, fmt.Sprintf("cold/%d", m.SeqNo)))
	}
	must(t, cold.MarkArchived(ctx, rows[3], "cold/4")) // the edit
	// Message 3 changed (the edit) since it was listed: not marked.
	wantErr(t, cold.MarkArchived(ctx, msg(c.ID, 3, "alice", "bob"), "cold/3"), server.ErrTargetChanged)
	// Marked twice: the content is gone already.
	wantErr(t, cold.MarkArchived(ctx, rows[0], "cold/1"), server.ErrTargetChanged)
	hist, err := s.ListMessagesAfter(ctx, c.ID, 0, 10)
	must(t, err)
	for _, m := range hist {
		archived := m.SeqNo != 3
		if archived != (m.Content == "" && m.S3Ref == fmt.Sprintf("cold/%d", m.SeqNo)) || m.Timestamp.IsZero() || m.SenderID != "alice" {
			t.Fatalf("after archiving: %+v", m)
		}
	}
	if hist[3].Kind != wire.KindEdit || hist[3].TargetSeq != 3 {
		t.Fatalf("an archived edit lost its kind or target: %+v", hist[3])
	}
	wantErr(t, cold.MarkArchived(ctx, server.Message{ConversationID: c.ID, SeqNo: 99}, "cold/99"), server.ErrNotFound)
}

// testEditSeqs: a message's edits are found for its delete, whose archived
// text it removes; the delete leaves none of them with text or a blob ref.
func testEditSeqs(t *testing.T, s server.Store, cold server.ColdStore) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	must(t, s.AppendMessage(ctx, msg(c.ID, 1, "alice", "bob"), nil))
	must(t, s.AppendMessage(ctx, msg(c.ID, 2, "alice", "bob"), nil))
	must(t, s.AppendMessage(ctx, event(c.ID, 3, "alice", wire.KindEdit, 1, 0, "first edit"), nil))
	must(t, s.AppendMessage(ctx, event(c.ID, 4, "bob", wire.KindReaction, 1, 3, "👍"), nil))
	must(t, s.AppendMessage(ctx, event(c.ID, 5, "alice", wire.KindEdit, 1, 4, "second edit"), nil))
	must(t, s.AppendMessage(ctx, event(c.ID, 6, "alice", wire.KindEdit, 2, 0, "other message's edit"), nil))
	for _, seq := range []int64{3, 6} {
		must(t, cold.MarkArchived(ctx, messageAt(t, s, c.ID, seq), fmt.Sprintf("cold/%d", seq)))
	}
	got, err := cold.EditSeqs(ctx, c.ID, 1)
	must(t, err)
	if !slices.Equal(got, []int64{3, 5}) {
		t.Fatalf("edits of 1: %v; want 3 and 5 (4 is a reaction, 6 edits 2)", got)
	}
	if got, err := cold.EditSeqs(ctx, c.ID, 99); err != nil || len(got) != 0 {
		t.Fatalf("edits of no message: %v, %v", got, err)
	}
	must(t, s.AppendMessage(ctx, event(c.ID, 7, "alice", wire.KindDelete, 1, 5, ""), nil))
	for _, seq := range []int64{3, 5} {
		if m := messageAt(t, s, c.ID, seq); m.Content != "" || m.S3Ref != "" {
			t.Fatalf("an edit of a deleted message keeps %q / %q", m.Content, m.S3Ref)
		}
	}
	// An edit whose text the delete cleared cannot be marked archived.
	wantErr(t, cold.MarkArchived(ctx, event(c.ID, 5, "alice", wire.KindEdit, 1, 4, "second edit"), "cold/5"), server.ErrTargetChanged)
	if m := messageAt(t, s, c.ID, 6); m.S3Ref != "cold/6" {
		t.Fatalf("another message's archived edit: %+v", m)
	}
}

// testColdStoreEvents: an edit or delete checked against a message while it
// was hot, stored after the archiver moved it, is refused (the Service would
// not remove the blob, and the old text would stay in it); an edit of an
// archived message puts its text back in the table, a delete leaves no ref.
func testColdStoreEvents(t *testing.T, s server.Store, cold server.ColdStore) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	for i := int64(1); i <= 2; i++ {
		must(t, s.AppendMessage(ctx, msg(c.ID, i, "alice", "bob"), nil))
		must(t, cold.MarkArchived(ctx, msg(c.ID, i, "alice", "bob"), fmt.Sprintf("cold/%d", i)))
	}
	stale := event(c.ID, 3, "alice", wire.KindEdit, 1, 0, "edited in the cold")
	wantErr(t, s.AppendMessage(ctx, stale, nil), server.ErrTargetChanged)
	stale.BaseRef = "cold/1"
	must(t, s.AppendMessage(ctx, stale, nil))
	if m := messageAt(t, s, c.ID, 1); m.Content != "edited in the cold" || m.S3Ref != "" || !m.Edited {
		t.Fatalf("edited archived message: %+v", m)
	}
	del := event(c.ID, 4, "alice", wire.KindDelete, 2, 0, "")
	wantErr(t, s.AppendMessage(ctx, del, nil), server.ErrTargetChanged)
	del.BaseRef = "cold/2"
	must(t, s.AppendMessage(ctx, del, nil))
	if m := messageAt(t, s, c.ID, 2); !m.Deleted || m.S3Ref != "" || m.Content != "" {
		t.Fatalf("deleted archived message: %+v", m)
	}
}
