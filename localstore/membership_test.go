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
