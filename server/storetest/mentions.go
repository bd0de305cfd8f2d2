package storetest

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// unreadMentions is what the inbox shows: the entry's mention seq_nos after
// the member's read boundary.
func unreadMentions(e server.InboxEntry) int {
	n := 0
	for _, s := range e.MentionSeqs {
		if s > e.Status.LastReadSeq {
			n++
		}
	}
	return n
}

// testMentions: a message's mentions are stored with it and counted in the
// same write for each member they name (by id, or @all/@here for every member
// but the sender); the read boundary clears them; the sender, and users
// outside the conversation, get none.
func testMentions(t *testing.T, s server.Store) {
	ctx := context.Background()
	g := server.Conversation{ID: "g:mentions", Type: wire.Group, Name: "Team", CreatedAt: t0}
	var ps []server.Participant
	for _, u := range []string{"alice", "bob", "carol"} {
		ps = append(ps, server.Participant{ConversationID: g.ID, UserID: u, Role: wire.RoleMember, JoinedAt: t0})
	}
	must(t, s.CreateConversation(ctx, g, ps))
	others := func(sender string) []string {
		return slices.DeleteFunc([]string{"alice", "bob", "carol"}, func(u string) bool { return u == sender })
	}
	send := func(seq int64, sender string, mentions ...string) server.Message {
		m := msg(g.ID, seq, sender, "")
		m.Mentions = mentions
		must(t, s.AppendMessage(ctx, m, others(sender)))
		return m
	}
	counts := func() map[string]int {
		out := map[string]int{}
		for _, u := range []string{"alice", "bob", "carol", "dave"} {
			es, err := s.InboxEntries(ctx, u, []string{g.ID})
			must(t, err)
			for _, e := range es {
				out[u] = unreadMentions(e)
			}
		}
		return out
	}
	want := func(step string, w map[string]int) {
		t.Helper()
		if got := counts(); !reflect.DeepEqual(got, w) {
			t.Fatalf("%s: unread mentions %v, want %v", step, got, w)
		}
	}

	first := send(1, "alice", "bob")
	want("alice mentions bob", map[string]int{"alice": 0, "bob": 1, "carol": 0})
	send(2, "alice", wire.MentionAll)
	want("alice's @all", map[string]int{"alice": 0, "bob": 2, "carol": 1})
	send(3, "carol") // no mention: counts stay
	// A batch counts each of its messages' mentions too.
	batch := []server.Message{msg(g.ID, 4, "carol", ""), msg(g.ID, 5, "carol", "")}
	batch[0].Mentions, batch[1].Mentions = []string{"bob"}, []string{"alice", "bob"}
	if ba, ok := s.(server.BatchAppender); ok {
		_, err := ba.AppendMessages(ctx, batch, others("carol"))
		must(t, err)
	} else {
		for _, m := range batch {
			must(t, s.AppendMessage(ctx, m, others("carol")))
		}
	}
	want("carol's batch", map[string]int{"alice": 1, "bob": 4, "carol": 0})

	// The read boundary clears what it passes, and only that.
	_, _, err := s.AdvanceStatus(ctx, "bob", g.ID, 4, 4)
	must(t, err)
	want("bob read up to 4", map[string]int{"alice": 1, "bob": 1, "carol": 0})
	// @here counts like @all; sending moves the sender's boundary (a reply
	// implies read), so bob's own message clears his.
	send(6, "bob", wire.MentionHere)
	want("bob's @here", map[string]int{"alice": 2, "bob": 0, "carol": 1})

	// The mentions are stored with the message, as sent.
	got, err := s.ListMessagesAfter(ctx, g.ID, 0, 10)
	must(t, err)
	if len(got) != 6 || !slices.Equal(got[0].Mentions, first.Mentions) || got[2].Mentions != nil ||
		!slices.Equal(got[4].Mentions, []string{"alice", "bob"}) || !slices.Equal(got[5].Mentions, []string{wire.MentionHere}) {
		t.Fatalf("stored mentions: %+v", got)
	}
	// What bob read is still listed (GET /v1/mentions), not only counted.
	es, err := s.InboxEntries(ctx, "bob", []string{g.ID})
	must(t, err)
	for _, seq := range []int64{1, 2, 4, 5} {
		if !slices.Contains(es[0].MentionSeqs, seq) {
			t.Fatalf("bob's mention seq_nos %v lack %d", es[0].MentionSeqs, seq)
		}
	}
	in, err := s.Inbox(ctx, "carol", 10)
	must(t, err)
	if len(in) != 1 || unreadMentions(in[0]) != 1 {
		t.Fatalf("carol's inbox: %+v", in)
	}
}

// testMentionSetting: a group's @all rule is off until set, set both ways,
// and refused for a conversation that does not exist.
func testMentionSetting(t *testing.T, s server.Store) {
	ctx := context.Background()
	g := server.Conversation{ID: "g:setting", Type: wire.Group, Name: "Team", CreatedAt: t0}
	must(t, s.CreateConversation(ctx, g, []server.Participant{{ConversationID: g.ID, UserID: "alice", Role: wire.RoleAdmin, JoinedAt: t0}}))
	on, err := s.MentionAllAdminsOnly(ctx, g.ID)
	must(t, err)
	if on {
		t.Fatal("a new group keeps @all for admins")
	}
	for _, want := range []bool{true, false, true} {
		must(t, s.SetMentionAllAdminsOnly(ctx, g.ID, want))
		on, err := s.MentionAllAdminsOnly(ctx, g.ID)
		must(t, err)
		if on != want {
			t.Fatalf("set %v, read %v", want, on)
		}
	}
	wantErr(t, s.SetMentionAllAdminsOnly(ctx, "g:none", true), server.ErrNotFound)
	if on, err := s.MentionAllAdminsOnly(ctx, "g:none"); err != nil || on {
		t.Fatalf("no such group: %v, %v", on, err)
	}
}
