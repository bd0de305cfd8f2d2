package localstore

import (
	"slices"
	"testing"

	"github.com/chatterm/chat/wire"
)

// Membership events are cached with their users, change no cached message,
// and are neither unread nor the preview; an event of a kind this version
// does not know is cached and changes nothing either (what a protocol 2
// client did with membership events, so the server sends them to all).
func TestMembershipEventsCached(t *testing.T) {
	s := MustOpen(t)
	added := wire.Message{ConversationID: dm, SeqNo: 2, MessageID: "e2", SenderID: "bob", Kind: wire.KindAdded, Members: []string{"carol", "dave"}}
	renamed := wire.Message{ConversationID: dm, SeqNo: 3, MessageID: "e3", SenderID: "bob", Kind: wire.KindRenamed, Content: "night shift"}
	future := wire.Message{ConversationID: dm, SeqNo: 4, MessageID: "e4", SenderID: "bob", Kind: "pinned", Content: "whatever it holds"}
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hello"), added, renamed, future); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 2); m.Kind != wire.KindAdded || !slices.Equal(m.Members, []string{"carol", "dave"}) || m.Content != "" {
		t.Fatalf("added read back as %+v", m)
	}
	if m := cached(t, s, 3); m.Content != "night shift" || len(m.Members) != 0 {
		t.Fatalf("renamed read back as %+v", m)
	}
	if m := cached(t, s, 1); m.Content != "hello" || m.UpdatedSeq != 0 {
		t.Fatalf("the message was changed by events: %+v", m)
	}
	e, err := s.InboxEntry(ctx, dm)
	if err != nil {
		t.Fatal(err)
	}
	if e.LastMessageBody != "hello" || e.LastSeq != 4 || e.Unread != 1 {
		t.Fatalf("inbox: %+v; want preview hello, last_seq 4, 1 unread", e)
	}
}

func cachedMembers(t *testing.T, s *Store, conv string) []string {
	t.Helper()
	sts, err := s.Statuses(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range sts {
		out = append(out, st.UserID)
	}
	slices.Sort(out)
	return out
}

// New membership events keep the cached members (whose boundaries hold a
// group's ticks back) and the name in line; an old one fetched later with a
// page of history changes nothing.
func TestMembershipEventsKeepTheMembers(t *testing.T) {
	s := MustOpen(t)
	const g = "g:crew"
	if err := s.PutConversation(ctx, wire.Conversation{ConversationID: g, Type: wire.Group, Name: "crew",
		Participants: []wire.Participant{{UserID: "me"}, {UserID: "bob"}}}); err != nil {
		t.Fatal(err)
	}
	ev := func(seq int64, sender, kind string, members []string, content string) wire.Message {
		return wire.Message{ConversationID: g, SeqNo: seq, MessageID: "e" + string(rune('a'+seq)), SenderID: sender, Kind: kind, Members: members, Content: content}
	}
	if _, err := s.PutMessages(ctx, ev(10, "me", wire.KindAdded, []string{"carol", "dave"}, ""), ev(11, "bob", wire.KindLeft, nil, ""),
		ev(12, "me", wire.KindRemoved, []string{"dave"}, ""), ev(13, "erin", wire.KindJoined, nil, ""), ev(14, "me", wire.KindRenamed, nil, "night shift")); err != nil {
		t.Fatal(err)
	}
	if got, want := cachedMembers(t, s, g), []string{"carol", "erin", "me"}; !slices.Equal(got, want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	e, err := s.InboxEntry(ctx, g)
	if err != nil || e.Name != "night shift" {
		t.Fatalf("name %q (%v)", e.Name, err)
	}
	// A page of older history: dave's addition long ago is not now.
	if _, err := s.PutMessages(ctx, ev(3, "me", wire.KindAdded, []string{"dave"}, ""), ev(4, "me", wire.KindRenamed, nil, "old name")); err != nil {
		t.Fatal(err)
	}
	if got := cachedMembers(t, s, g); slices.Contains(got, "dave") {
		t.Fatalf("an old event brought dave back: %v", got)
	}
	if e, _ := s.InboxEntry(ctx, g); e.Name != "night shift" {
		t.Fatalf("an old rename applied: %q", e.Name)
	}
}
