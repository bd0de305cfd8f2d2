package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// event is an event of sender on target at seq, checked against the target
// as last changed at base.
func event(conv string, seq int64, sender, kind string, target, base int64, content string) server.Message {
	return server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprintf("e-%s-%d", sender, seq), SenderID: sender,
		Content: content, Timestamp: t0.Add(time.Duration(seq) * time.Second), Kind: kind, TargetSeq: target, BaseSeq: base}
}

func messageAt(t *testing.T, s server.Store, conv string, seq int64) server.Message {
	t.Helper()
	got, err := s.ListMessages(context.Background(), conv, seq+1, 1)
	must(t, err)
	if len(got) != 1 || got[0].SeqNo != seq {
		t.Fatalf("no message at %d: %+v", seq, got)
	}
	return got[0]
}

// Each kind of event is stored as a row of its own and applied to its
// target's row in the same write; the preview follows edits and deletes of
// the message it shows, never reactions; unread counts skip events.
func testEvents(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	m1 := msg(c.ID, 1, "alice", "bob")
	m2 := msg(c.ID, 2, "bob", "alice")
	m2.ReplyTo = 1
	must(t, s.AppendMessage(ctx, m1, []string{"bob"}))
	must(t, s.AppendMessage(ctx, m2, []string{"alice"}))
	if got := messageAt(t, s, c.ID, 2); got.ReplyTo != 1 {
		t.Fatalf("reply stored as %+v", got)
	}

	// Reactions: bob 👍 on 1, alice ❤ on 1, bob takes his away.
	must(t, s.AppendMessage(ctx, event(c.ID, 3, "bob", wire.KindReaction, 1, 0, "👍"), []string{"alice"}))
	must(t, s.AppendMessage(ctx, event(c.ID, 4, "alice", wire.KindReaction, 1, 3, "❤"), []string{"bob"}))
	if got := messageAt(t, s, c.ID, 1); !reflect.DeepEqual(got.Reactions, map[string]string{"bob": "👍", "alice": "❤"}) || got.UpdatedSeq != 4 {
		t.Fatalf("after two reactions: %+v", got)
	}
	must(t, s.AppendMessage(ctx, event(c.ID, 5, "bob", wire.KindReaction, 1, 4, ""), []string{"alice"}))
	if got := messageAt(t, s, c.ID, 1); !reflect.DeepEqual(got.Reactions, map[string]string{"alice": "❤"}) || got.UpdatedSeq != 5 {
		t.Fatalf("after a reaction taken away: %+v", got)
	}
	if ev := messageAt(t, s, c.ID, 3); ev.Kind != wire.KindReaction || ev.TargetSeq != 1 || ev.Content != "👍" {
		t.Fatalf("reaction row: %+v", ev)
	}
	// A resent reaction is answered with how its toggle went.
	sent, err := s.SentMessages(ctx, c.ID, []string{"e-bob-3", "e-bob-5"})
	must(t, err)
	if a, b := sent["e-bob-3"], sent["e-bob-5"]; a.Kind != wire.KindReaction || a.Content != "👍" || b.Kind != wire.KindReaction || b.Content != "" || b.SeqNo != 5 {
		t.Fatalf("SentMessages of reactions: %+v", sent)
	}
	conv, err := s.GetConversation(ctx, c.ID)
	must(t, err)
	if conv.LastSeq != 5 || conv.LastMessageBody != m2.Content || !conv.LastMessageAt.Equal(m2.Timestamp) {
		t.Fatalf("reactions moved the preview: %+v", conv)
	}
	// Unread: bob's reactions are not messages.
	if n, err := s.CountMessages(ctx, c.ID, 0, 5, 100); err != nil || n != 2 {
		t.Fatalf("CountMessages over 2 messages and 3 reactions = %d, %v; want 2", n, err)
	}
	// Events reach the receivers like messages: bob has 1, 3 and 5 pending... of
	// alice's sends, only 1 and 4 are his.
	pend, err := s.ListPending(ctx, "bob")
	must(t, err)
	if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 1 {
		t.Fatalf("bob's pending rows: %+v", pend)
	}

	// An edit of the last message changes the preview; two edits, the second wins.
	must(t, s.AppendMessage(ctx, event(c.ID, 6, "bob", wire.KindEdit, 2, 0, "edited once"), []string{"alice"}))
	must(t, s.AppendMessage(ctx, event(c.ID, 7, "bob", wire.KindEdit, 2, 6, "edited twice"), []string{"alice"}))
	if got := messageAt(t, s, c.ID, 2); got.Content != "edited twice" || !got.Edited || got.UpdatedSeq != 7 || got.ReplyTo != 1 {
		t.Fatalf("after two edits: %+v", got)
	}
	conv, err = s.GetConversation(ctx, c.ID)
	must(t, err)
	if conv.LastSeq != 7 || conv.LastMessageBody != "edited twice" {
		t.Fatalf("an edit of the previewed message left the preview %q (last_seq %d)", conv.LastMessageBody, conv.LastSeq)
	}
	// An edit of an older message leaves the preview alone.
	must(t, s.AppendMessage(ctx, event(c.ID, 8, "alice", wire.KindEdit, 1, 5, "alice edited"), []string{"bob"}))
	conv, err = s.GetConversation(ctx, c.ID)
	must(t, err)
	if conv.LastMessageBody != "edited twice" {
		t.Fatalf("an edit of an older message changed the preview to %q", conv.LastMessageBody)
	}
	if got := messageAt(t, s, c.ID, 1); got.Content != "alice edited" || !reflect.DeepEqual(got.Reactions, map[string]string{"alice": "❤"}) {
		t.Fatalf("an edit lost the reactions: %+v", got)
	}

	// A delete leaves a tombstone: no content anywhere, not even in the edits.
	must(t, s.AppendMessage(ctx, event(c.ID, 9, "bob", wire.KindDelete, 2, 7, ""), []string{"alice"}))
	got := messageAt(t, s, c.ID, 2)
	if !got.Deleted || got.Content != "" || got.Attachment != "" || got.UpdatedSeq != 9 || got.SenderID != "bob" {
		t.Fatalf("deleted message: %+v", got)
	}
	all, err := s.ListMessagesAfter(ctx, c.ID, 0, 100)
	must(t, err)
	for _, m := range all {
		if m.Kind == wire.KindEdit && m.TargetSeq == 2 && m.Content != "" {
			t.Fatalf("the edit at %d of a deleted message still says %q", m.SeqNo, m.Content)
		}
	}
	if all[7].Content != "alice edited" { // seq 8: another message's edit is kept
		t.Fatalf("a delete cleared another message's edit: %+v", all[7])
	}
	conv, err = s.GetConversation(ctx, c.ID)
	must(t, err)
	if conv.LastMessageBody != wire.DeletedPreview || conv.LastSeq != 9 {
		t.Fatalf("preview after the last message was deleted: %q", conv.LastMessageBody)
	}
	if n, err := s.CountMessages(ctx, c.ID, 0, 9, 100); err != nil || n != 2 {
		t.Fatalf("CountMessages with edits and a delete = %d, %v; want 2", n, err)
	}
	// A resend of an event is a duplicate like any message's.
	var dup *server.DuplicateError
	if err := s.AppendMessage(ctx, event(c.ID, 10, "bob", wire.KindDelete, 2, 7, ""), nil); err == nil {
		t.Fatal("a second delete of a deleted message was stored")
	}
	resent := event(c.ID, 10, "bob", wire.KindReaction, 1, 8, "👍")
	resent.MessageID = "e-bob-3"
	if err := s.AppendMessage(ctx, resent, nil); !asDup(err, &dup) || dup.Original.SeqNo != 3 || dup.Original.Kind != wire.KindReaction {
		t.Fatalf("resent event: %v", err)
	}
}

func asDup(err error, dup **server.DuplicateError) bool {
	d, ok := err.(*server.DuplicateError)
	if ok {
		*dup = d
	}
	return ok
}

// An event is applied only to the target the Service checked: a target
// changed since (BaseSeq behind), deleted, missing, or an event itself is
// refused with ErrTargetChanged, and nothing is written: not the event's row,
// not last_seq.
func testEventTargetChanged(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, members := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, c, members))
	must(t, s.AppendMessage(ctx, msg(c.ID, 1, "alice", "bob"), []string{"bob"}))
	must(t, s.AppendMessage(ctx, event(c.ID, 2, "bob", wire.KindReaction, 1, 0, "👍"), []string{"alice"}))
	for _, tc := range []struct {
		name string
		ev   server.Message
	}{
		{"behind", event(c.ID, 3, "alice", wire.KindEdit, 1, 0, "stale")},
		{"ahead", event(c.ID, 3, "alice", wire.KindEdit, 1, 7, "made up")},
		{"missing", event(c.ID, 3, "alice", wire.KindReaction, 99, 0, "👍")},
		{"an event", event(c.ID, 3, "alice", wire.KindReaction, 2, 0, "👍")},
	} {
		wantErr(t, s.AppendMessage(ctx, tc.ev, []string{"bob"}), server.ErrTargetChanged)
		conv, err := s.GetConversation(ctx, c.ID)
		must(t, err)
		if conv.LastSeq != 2 {
			t.Fatalf("%s: a refused event moved last_seq to %d", tc.name, conv.LastSeq)
		}
		if got, err := s.ListMessages(ctx, c.ID, 0, 10); err != nil || len(got) != 2 {
			t.Fatalf("%s: a refused event left %d rows, %v", tc.name, len(got), err)
		}
	}
	must(t, s.AppendMessage(ctx, event(c.ID, 3, "alice", wire.KindDelete, 1, 2, ""), []string{"bob"}))
	wantErr(t, s.AppendMessage(ctx, event(c.ID, 4, "bob", wire.KindReaction, 1, 3, "👍"), []string{"alice"}), server.ErrTargetChanged)
}
