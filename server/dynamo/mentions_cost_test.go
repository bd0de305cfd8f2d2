package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

// TestMentionCost measures, as TestMessageCost does, the write units of a
// group message with mentions (docs/dynamodb.md, "Mentions"): a member named
// adds their message_status item to the transaction (2 WCU), @all or @here
// adds nothing but its bytes on the conversation item, which the send
// updates anyway; and the inbox reads no more items for the counts.
func TestMentionCost(t *testing.T) {
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter})
	ctx := context.Background()
	now := time.Now().UTC()
	const conv = "g:mention-cost"
	var members []string
	var ps []server.Participant
	for i := range 10 {
		u := fmt.Sprintf("user%02d", i)
		members = append(members, u)
		ps = append(ps, server.Participant{UserID: u, Role: wire.RoleMember, JoinedAt: now.Add(-time.Hour)})
	}
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Group, CreatedAt: now.Add(-time.Hour)}, ps))
	content := strings.Repeat("a typical message of a few words ", 3)
	seq := int64(0)
	send := func(mentions ...string) float64 {
		t.Helper()
		seq++
		m := server.Message{ConversationID: conv, SeqNo: seq, MessageID: wire.NewMessageID(), SenderID: "user00",
			Content: content, Timestamp: now.Add(time.Duration(seq) * time.Second), Mentions: mentions}
		meter.Reset()
		must(t, s.AppendMessage(ctx, m, members[1:]))
		return meter.Units()
	}
	send() // the first message also moves the index entries
	plain := send()
	one := send("user01")
	three := send("user01", "user02", "user03")
	all := send(wire.MentionAll)
	t.Logf("group of 10: plain %g WCU, one member named %g, three named %g, @all %g", plain, one, three, all)
	if one > plain+2 || three > plain+6 {
		t.Errorf("a member named costs more than their status item's 2 WCU: plain %g, one %g, three %g", plain, one, three)
	}
	if all > plain+2 {
		t.Errorf("@all costs %g WCU against %g plain: it should only add bytes to the conversation item", all, plain)
	}
	meter.Reset()
	in, err := s.Inbox(ctx, "user01", 20)
	must(t, err)
	t.Logf("user01's inbox of one conversation: %g RCU: %s", meter.ReadUnits(), meter)
	if len(in) != 1 || len(in[0].MentionSeqs) != 3 {
		t.Fatalf("user01's mention seq_nos: %+v", in)
	}
}

// TestMentionSeqsTrimmedByReads: a member's mention seq_nos past the newest
// KeepMentions go once a read passes them, unread ones never; the count after
// the read boundary is what it was.
func TestMentionSeqsTrimmedByReads(t *testing.T) {
	s := open(t, dynamo.Options{KeepMentions: 2})
	ctx := context.Background()
	now := time.Now().UTC()
	const conv = "g:trim"
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Group, CreatedAt: now}, []server.Participant{
		{UserID: "alice", Role: wire.RoleAdmin, JoinedAt: now}, {UserID: "bob", Role: wire.RoleMember, JoinedAt: now}}))
	for seq := int64(1); seq <= 5; seq++ {
		must(t, s.AppendMessage(ctx, server.Message{ConversationID: conv, SeqNo: seq, MessageID: wire.NewMessageID(), SenderID: "alice",
			Content: "@bob", Timestamp: now.Add(time.Duration(seq) * time.Second), Mentions: []string{"bob"}}, []string{"bob"}))
	}
	seqs := func() []int64 {
		t.Helper()
		es, err := s.InboxEntries(ctx, "bob", []string{conv})
		must(t, err)
		return es[0].MentionSeqs
	}
	if _, _, err := s.AdvanceStatus(ctx, "bob", conv, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got := seqs(); !slices.Equal(got, []int64{2, 3, 4, 5}) {
		t.Fatalf("after reading 1: %v, want 2..5 (unread ones stay)", got)
	}
	if _, _, err := s.AdvanceStatus(ctx, "bob", conv, 4, 4); err != nil {
		t.Fatal(err)
	}
	if got := seqs(); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("after reading 4: %v, want the newest two", got)
	}
}
