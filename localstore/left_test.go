package localstore

import (
	"slices"
	"testing"

	"github.com/chatterm/chat/wire"
)

func inboxIDs(t *testing.T, s *Store) []string {
	t.Helper()
	es, err := s.Inbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.ConversationID)
	}
	slices.Sort(out)
	return out
}

// The user's own leaving (left, or removed by someone) takes the
// conversation out of the inbox and keeps its messages; coming back (added,
// joined, a newer inbox entry from the server) brings it back.
func TestLeftConversationLeavesTheInbox(t *testing.T) {
	s := MustOpen(t)
	const g = "g:crew"
	if err := s.PutConversation(ctx, wire.Conversation{ConversationID: g, Type: wire.Group, Name: "crew",
		Participants: []wire.Participant{{UserID: "me"}, {UserID: "bob"}}}); err != nil {
		t.Fatal(err)
	}
	ev := func(seq int64, sender, kind string, members ...string) wire.Message {
		return wire.Message{ConversationID: g, SeqNo: seq, MessageID: "e" + string(rune('a'+seq)), SenderID: sender, Kind: kind, Members: members}
	}
	want := func(step string, ids ...string) {
		t.Helper()
		if got := inboxIDs(t, s); !slices.Equal(got, ids) {
			t.Fatalf("%s: inbox %v, want %v", step, got, ids)
		}
	}
	if _, err := s.PutMessages(ctx, msg(g, 1, "bob", "hello"), msg(dm, 1, "bob", "hi")); err != nil {
		t.Fatal(err)
	}
	want("members", dm, g)

	if _, err := s.PutMessages(ctx, ev(2, "me", wire.KindLeft)); err != nil {
		t.Fatal(err)
	}
	want("after my own left", dm)
	if msgs, err := s.MessagesAfter(ctx, g, 0, 10); err != nil || len(msgs) != 2 {
		t.Fatalf("the left group's messages: %d (%v), want both kept", len(msgs), err)
	}
	if _, err := s.PutMessages(ctx, ev(4, "me", wire.KindJoined)); err != nil {
		t.Fatal(err)
	}
	want("joined again", dm, g)

	if _, err := s.PutMessages(ctx, ev(5, "bob", wire.KindRemoved, "me")); err != nil {
		t.Fatal(err)
	}
	want("removed by bob", dm)
	if _, err := s.PutMessages(ctx, ev(6, "bob", wire.KindAdded, "me")); err != nil {
		t.Fatal(err)
	}
	want("added back by bob", dm, g)

	// The server's inbox lists a conversation only to a member: an entry
	// newer than the leaving brings it back, an older one (read before it)
	// does not.
	if _, err := s.PutMessages(ctx, ev(7, "me", wire.KindLeft)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: g, Type: wire.Group, Name: "crew", LastSeq: 6}); err != nil {
		t.Fatal(err)
	}
	want("a stale server inbox entry", dm)
	if err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: g, Type: wire.Group, Name: "crew", LastSeq: 8}); err != nil {
		t.Fatal(err)
	}
	want("a server inbox entry after the leaving", dm, g)
}

// A device offline while the user left never gets the event: a complete
// server inbox without a cached conversation takes it out, until anything
// newer than what was cached arrives.
func TestMarkLeftUnlisted(t *testing.T) {
	s := MustOpen(t)
	const g = "g:crew"
	if _, err := s.PutMessages(ctx, msg(g, 1, "bob", "hello"), msg(g, 2, "bob", "again"), msg(dm, 1, "bob", "hi")); err != nil {
		t.Fatal(err)
	}
	n, err := s.MarkLeftUnlisted(ctx, []string{dm, g}, []string{dm})
	if err != nil || n != 1 {
		t.Fatalf("marked %d (%v), want 1", n, err)
	}
	if got := inboxIDs(t, s); !slices.Equal(got, []string{dm}) {
		t.Fatalf("inbox %v, want only %s", got, dm)
	}
	if _, err := s.PutMessages(ctx, msg(g, 3, "bob", "welcome back")); err != nil {
		t.Fatal(err)
	}
	if got := inboxIDs(t, s); !slices.Equal(got, []string{dm, g}) {
		t.Fatalf("after a newer message: inbox %v, want both", got)
	}
}
