package dynamo_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// TestMentionAllIsBounded: the conversation item's mention_all keeps the
// newest KeepMentions @all/@here seq_nos (and at most a quarter more
// between trims), whether they come one send at a time or in a batch;
// every send writes that item, so it must not grow with every @all. A
// member's own mention by id, unread, stays.
func TestMentionAllIsBounded(t *testing.T) {
	const keep = 4
	s := open(t, dynamo.Options{KeepMentions: keep})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	const conv = "g:mention-trim"
	var ps []server.Participant
	for _, u := range []string{"alice", "bob", "carol"} {
		ps = append(ps, server.Participant{ConversationID: conv, UserID: u, Role: wire.RoleMember, JoinedAt: now})
	}
	if err := s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Group, Name: "trim", CreatedAt: now}, ps); err != nil {
		t.Fatal(err)
	}
	message := func(seq int64, mentions ...string) server.Message {
		return server.Message{ConversationID: conv, SeqNo: seq, MessageID: "m" + string(rune('A'+seq)), SenderID: "alice",
			Content: "hi", Timestamp: now.Add(time.Duration(seq) * time.Millisecond), Mentions: mentions}
	}
	check := func(step string, newest int64) {
		t.Helper()
		es, err := s.InboxEntries(ctx, "bob", []string{conv})
		if err != nil || len(es) != 1 {
			t.Fatalf("%s: bob's entry %+v, %v", step, es, err)
		}
		seqs := es[0].MentionSeqs
		if !slices.Contains(seqs, 1) {
			t.Fatalf("%s: bob's own unread mention (seq 1) is gone: %v", step, seqs)
		}
		all := len(seqs) - 1
		if all > keep+1 {
			t.Fatalf("%s: %d @all seq_nos kept (%v), want at most %d", step, all, seqs, keep+1)
		}
		for seq := newest - keep + 1; seq <= newest; seq++ {
			if !slices.Contains(seqs, seq) {
				t.Fatalf("%s: the newest @all %d is not kept: %v", step, seq, seqs)
			}
		}
	}
	if err := s.AppendMessage(ctx, message(1, "bob"), []string{"bob", "carol"}); err != nil {
		t.Fatal(err)
	}
	for seq := int64(2); seq <= 15; seq++ {
		if err := s.AppendMessage(ctx, message(seq, wire.MentionAll), []string{"bob", "carol"}); err != nil {
			t.Fatal(err)
		}
	}
	check("14 @all one at a time", 15)
	var batch []server.Message
	for seq := int64(16); seq <= 22; seq++ {
		batch = append(batch, message(seq, wire.MentionHere))
	}
	if _, err := s.AppendMessages(ctx, batch, []string{"bob", "carol"}); err != nil {
		t.Fatal(err)
	}
	check("7 @here in a batch", 22)
}
