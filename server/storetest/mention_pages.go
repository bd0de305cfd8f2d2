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

// testMentionPages: server.ListMentions pages a user's mentions newest first
// by time, conversation and seq_no, a page of one at a time following each
// page's last as the cursor, and lists every mention once, in order, when
// two share a time (to the microsecond) across conversations or in one
// conversation, each pair on a page boundary (a cursor of the time alone
// dropped the second of each pair).
func testMentionPages(t *testing.T, s server.Store) {
	ctx := context.Background()
	var convs []string
	for _, id := range []string{"g:pages-a", "g:pages-b"} {
		g := server.Conversation{ID: id, Type: wire.Group, Name: "Team", CreatedAt: t0}
		must(t, s.CreateConversation(ctx, g, []server.Participant{
			{ConversationID: id, UserID: "alice", Role: wire.RoleAdmin, JoinedAt: t0},
			{ConversationID: id, UserID: "bob", Role: wire.RoleMember, JoinedAt: t0},
		}))
		convs = append(convs, id)
	}
	tie := t0.Add(time.Minute + 123456*time.Microsecond)
	send := func(conv string, seq int64, at time.Time) {
		m := msg(conv, seq, "alice", "")
		m.Timestamp, m.Mentions = at, []string{"bob"}
		must(t, s.AppendMessage(ctx, m, []string{"bob"}))
	}
	send(convs[0], 1, tie)                    // ties with b/1 across conversations
	send(convs[1], 1, tie)                    //
	send(convs[1], 2, tie.Add(time.Second))   // ties with b/3 in one conversation
	send(convs[1], 3, tie.Add(time.Second))   //
	send(convs[0], 2, tie.Add(2*time.Second)) // the newest
	want := []string{"g:pages-a/2", "g:pages-b/3", "g:pages-b/2", "g:pages-b/1", "g:pages-a/1"}

	var got []string
	var after wire.MentionCursor
	for range len(want) + 2 {
		page, more, err := server.ListMentions(ctx, s, "bob", after, 1)
		must(t, err)
		for _, m := range page {
			got = append(got, fmt.Sprintf("%s/%d", m.ConversationID, m.SeqNo))
		}
		if !more {
			break
		}
		last := page[len(page)-1]
		// The cursor as it goes over the wire and comes back.
		after, err = wire.ParseMentionCursor(wire.MentionCursor{Time: last.Timestamp, ConversationID: last.ConversationID, SeqNo: last.SeqNo}.String())
		must(t, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages of one listed %v, want %v", got, want)
	}

	// Pages of two end on the ties too.
	got = nil
	after = wire.MentionCursor{}
	for range len(want) {
		page, more, err := server.ListMentions(ctx, s, "bob", after, 2)
		must(t, err)
		for _, m := range page {
			got = append(got, fmt.Sprintf("%s/%d", m.ConversationID, m.SeqNo))
		}
		if !more {
			break
		}
		last := page[len(page)-1]
		after = wire.MentionCursor{Time: last.Timestamp, ConversationID: last.ConversationID, SeqNo: last.SeqNo}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages of two listed %v, want %v", got, want)
	}
}
