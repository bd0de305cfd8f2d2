package storetest

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// testMentionJoiners: an @all or @here counts only for who was a member when
// it was sent. Members who join later, by a membership event (the Service's
// way) or by AddParticipants, count none of the earlier ones, and each later
// one; one removed and added back counts none sent while away, and keeps
// (listed, not unread) one left unread before leaving, on both backends.
func testMentionJoiners(t *testing.T, s server.Store) {
	ctx := context.Background()
	g := server.Conversation{ID: "g:joiners", Type: wire.Group, Name: "Team", CreatedAt: t0}
	must(t, s.CreateConversation(ctx, g, []server.Participant{
		{ConversationID: g.ID, UserID: "alice", Role: wire.RoleAdmin, JoinedAt: t0},
		{ConversationID: g.ID, UserID: "bob", Role: wire.RoleMember, JoinedAt: t0},
	}))
	members := []string{"alice", "bob"}
	receivers := func(sender string) []string {
		var out []string
		for _, u := range members {
			if u != sender {
				out = append(out, u)
			}
		}
		return out
	}
	var seq int64
	mentionAll := func(name string) {
		seq++
		m := msg(g.ID, seq, "alice", "")
		m.Mentions = []string{name}
		must(t, s.AppendMessage(ctx, m, receivers("alice")))
	}
	want := func(step string, w map[string]int) {
		t.Helper()
		got := map[string]int{}
		for u := range w {
			es, err := s.InboxEntries(ctx, u, []string{g.ID})
			must(t, err)
			if len(es) != 1 {
				t.Fatalf("%s: %s's inbox entries %+v, want one", step, u, es)
			}
			got[u] = unreadMentions(es[0])
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("%s: unread mentions %v, want %v", step, got, w)
		}
	}

	mentionAll(wire.MentionAll)
	mentionAll(wire.MentionHere)
	want("before anyone joins", map[string]int{"alice": 0, "bob": 2})

	seq++
	must(t, s.AppendMessage(ctx, membershipEvent(g.ID, seq, "alice", wire.KindAdded, []string{"carol"}, ""), receivers("alice")))
	members = append(members, "carol")
	must(t, s.AddParticipants(ctx, g.ID, []server.Participant{{ConversationID: g.ID, UserID: "dave", Role: wire.RoleMember, JoinedAt: t0}}))
	members = append(members, "dave")
	want("carol and dave joined after two @all", map[string]int{"alice": 0, "bob": 2, "carol": 0, "dave": 0})
	// Their boundaries start at the join on every backend: the history before
	// they came is not unread news (and the others' ticks on it stay); carol
	// joined by the event at seq 3, dave by AddParticipants at the newest, 3.
	for _, u := range []string{"carol", "dave"} {
		es, err := s.InboxEntries(ctx, u, []string{g.ID})
		must(t, err)
		if st := es[0].Status; st.LastReadSeq != seq || st.LastDeliveredSeq != seq {
			t.Fatalf("%s joined with boundaries %+v, want %d", u, st, seq)
		}
	}

	mentionAll(wire.MentionAll)
	want("an @all after they joined", map[string]int{"alice": 0, "bob": 3, "carol": 1, "dave": 1})

	// dave reads, leaves, misses an @here, and is added back.
	_, _, err := s.AdvanceStatus(ctx, "dave", g.ID, seq, seq)
	must(t, err)
	seq++
	members = members[:3]
	must(t, s.AppendMessage(ctx, membershipEvent(g.ID, seq, "alice", wire.KindRemoved, []string{"dave"}, ""), receivers("alice")))
	mentionAll(wire.MentionHere)
	seq++
	must(t, s.AppendMessage(ctx, membershipEvent(g.ID, seq, "alice", wire.KindAdded, []string{"dave"}, ""), receivers("alice")))
	members = append(members, "dave")
	want("dave back after an @here sent while away", map[string]int{"alice": 0, "bob": 4, "carol": 2, "dave": 0})

	// carol leaves with an @all unread, misses one, and is added back: the
	// one she had is still hers to list (GET /v1/mentions), read at the join
	// as all history before it is; the one sent while she was away is not.
	mentionAll(wire.MentionAll)
	unreadBefore := seq
	seq++
	members = []string{"alice", "bob", "dave"}
	must(t, s.AppendMessage(ctx, membershipEvent(g.ID, seq, "carol", wire.KindLeft, nil, ""), receivers("carol")))
	mentionAll(wire.MentionAll)
	away := seq
	seq++
	must(t, s.AppendMessage(ctx, membershipEvent(g.ID, seq, "alice", wire.KindAdded, []string{"carol"}, ""), receivers("alice")))
	members = append(members, "carol")
	es, err := s.InboxEntries(ctx, "carol", []string{g.ID})
	must(t, err)
	if len(es) != 1 || !slices.Contains(es[0].MentionSeqs, unreadBefore) || slices.Contains(es[0].MentionSeqs, away) {
		t.Fatalf("carol back: mention seq_nos %v, want %d (before she left) and not %d (while away)", es[0].MentionSeqs, unreadBefore, away)
	}
	if n := unreadMentions(es[0]); n != 0 {
		t.Fatalf("carol back: %d unread mentions, want 0 (read at the join)", n)
	}

	// The same through RemoveParticipant and AddParticipants.
	mentionAll(wire.MentionHere)
	daves := seq
	must(t, s.RemoveParticipant(ctx, g.ID, "dave"))
	members = []string{"alice", "bob", "carol"}
	must(t, s.AddParticipants(ctx, g.ID, []server.Participant{{ConversationID: g.ID, UserID: "dave", Role: wire.RoleMember, JoinedAt: t0}}))
	members = append(members, "dave")
	es, err = s.InboxEntries(ctx, "dave", []string{g.ID})
	must(t, err)
	if len(es) != 1 || !slices.Contains(es[0].MentionSeqs, daves) {
		t.Fatalf("dave back: mention seq_nos %+v, want %d (before he was removed)", es, daves)
	}
}
