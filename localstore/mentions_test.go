package localstore

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// TestMentionsCounted: messages naming the cache's user (by id, @all, @here;
// not their own) count in the inbox until the read boundary passes them, and
// the mentions view lists them newest first with their mentions.
func TestMentionsCounted(t *testing.T) {
	s := MustOpen(t) // the cache of alice
	ctx := context.Background()
	conv := "g:team"
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	mk := func(seq int64, sender string, mentions ...string) wire.Message {
		return wire.Message{ConversationID: conv, SeqNo: seq, MessageID: "m" + string(rune('a'+seq)), SenderID: sender,
			Content: "text", Timestamp: t0.Add(time.Duration(seq) * time.Second), Mentions: mentions}
	}
	if _, err := s.PutMessages(ctx,
		mk(1, "bob", s.UserID()), mk(2, "bob", "carol"), mk(3, "carol", wire.MentionHere), mk(4, s.UserID(), wire.MentionAll)); err != nil {
		t.Fatal(err)
	}
	e, err := s.InboxEntry(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	// Her own @all at 4 moved her read boundary past everything.
	if e.Mentions != 0 {
		t.Fatalf("after her own message: %d unread mentions", e.Mentions)
	}
	if _, err := s.PutMessages(ctx, mk(5, "bob", s.UserID()), mk(6, "bob", wire.MentionAll), mk(7, "bob")); err != nil {
		t.Fatal(err)
	}
	if e, _ = s.InboxEntry(ctx, conv); e.Mentions != 2 {
		t.Fatalf("two mentions after her boundary: %d", e.Mentions)
	}
	got, err := s.Mentions(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, m := range got {
		seqs = append(seqs, m.SeqNo)
	}
	if len(seqs) != 4 || seqs[0] != 6 || seqs[1] != 5 || seqs[2] != 3 || seqs[3] != 1 || got[0].Mentions[0] != wire.MentionAll {
		t.Fatalf("mentions view: %v %+v", seqs, got)
	}
}
