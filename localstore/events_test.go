package localstore

import (
	"maps"
	"testing"

	"github.com/chatterm/chat/wire"
)

func ev(seq int64, sender, kind string, target int64, content string) wire.Message {
	m := msg(dm, seq, sender, content)
	m.Kind, m.TargetSeq = kind, target
	return m
}

func cached(t *testing.T, s *Store, seq int64) wire.Message {
	t.Helper()
	m, err := s.Message(ctx, dm, seq)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A device that was offline gets the events in seq order and applies each
// to the cached message: reactions, an edit, a delete that also clears the
// edit's text; the preview and unread count follow.
func TestEventsApplyInOrder(t *testing.T) {
	s := MustOpen(t)
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "hello"), msg(dm, 2, "bob", "typo")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(ctx,
		ev(3, "bob", wire.KindReaction, 1, "👍"),
		ev(4, "me", wire.KindReaction, 1, "❤"),
		ev(5, "bob", wire.KindEdit, 2, "fixed"),
	); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 1); !maps.Equal(m.Reactions, map[string]string{"bob": "👍", "me": "❤"}) || m.UpdatedSeq != 4 {
		t.Fatalf("after reactions: %+v", m)
	}
	if m := cached(t, s, 2); m.Content != "fixed" || !m.Edited {
		t.Fatalf("after an edit: %+v", m)
	}
	e, err := s.InboxEntry(ctx, dm)
	if err != nil {
		t.Fatal(err)
	}
	// me reacted at 4, so read up to 4; 5 is bob's edit: no unread message.
	if e.LastMessageBody != "fixed" || e.LastSeq != 5 || e.Unread != 0 {
		t.Fatalf("inbox after an edit of the last message: %+v", e)
	}
	if _, err := s.PutMessages(ctx, ev(6, "bob", wire.KindDelete, 2, ""), msg(dm, 7, "bob", "new")); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 2); !m.Deleted || m.Content != "" {
		t.Fatalf("after a delete: %+v", m)
	}
	if m := cached(t, s, 5); m.Content != "" {
		t.Fatalf("the edit of a deleted message keeps its text: %+v", m)
	}
	e, _ = s.InboxEntry(ctx, dm)
	if e.LastMessageBody != "new" || e.Unread != 1 {
		t.Fatalf("inbox after a delete and a new message: %+v; want preview new, 1 unread", e)
	}
	if c := cursor(t, s, dm); c != 7 {
		t.Fatalf("cursor %d: events are seq_nos like messages", c)
	}
	// A reaction taken back.
	if _, err := s.PutMessages(ctx, ev(8, "bob", wire.KindReaction, 1, "")); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 1); !maps.Equal(m.Reactions, map[string]string{"me": "❤"}) {
		t.Fatalf("after bob took his reaction back: %v", m.Reactions)
	}
}

// An event seen again after its target was fetched with it applied (history
// pages in any order) changes nothing; a newer copy of a cached message
// updates it, an older one does not.
func TestEventsSeenTwiceChangeNothing(t *testing.T) {
	s := MustOpen(t)
	// The newest page first: the events, then (an older page) the target as
	// the server has it now, after both.
	if _, err := s.PutMessages(ctx, ev(2, "bob", wire.KindEdit, 1, "second"), ev(3, "bob", wire.KindEdit, 1, "third")); err != nil {
		t.Fatal(err)
	}
	now := msg(dm, 1, "bob", "third")
	now.Edited, now.UpdatedSeq = true, 3
	if _, err := s.PutMessages(ctx, now); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 1); m.Content != "third" {
		t.Fatalf("target fetched after its events: %+v", m)
	}
	// The first edit again (a redelivery) is older than the row: ignored.
	if _, err := s.PutMessages(ctx, ev(2, "bob", wire.KindEdit, 1, "second")); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 1); m.Content != "third" {
		t.Fatalf("an old edit seen again: %+v", m)
	}
	// A stale copy of the message does not roll it back; a newer one moves it on.
	stale := msg(dm, 1, "bob", "second")
	stale.Edited, stale.UpdatedSeq = true, 2
	newer := msg(dm, 1, "bob", "")
	newer.Deleted, newer.UpdatedSeq = true, 9
	if _, err := s.PutMessages(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 1); m.Content != "third" {
		t.Fatalf("a stale copy rolled the message back: %+v", m)
	}
	if _, err := s.PutMessages(ctx, newer); err != nil {
		t.Fatal(err)
	}
	if m := cached(t, s, 1); !m.Deleted || m.Content != "" {
		t.Fatalf("a newer copy was not taken: %+v", m)
	}
}

// The server's unread count leaves events out; when the inbox is refreshed
// from it before the events themselves arrive (a reconnect: inbox first, then
// the backlog), they are not counted out a second time.
func TestEventsAfterTheInboxCountedThem(t *testing.T) {
	s := MustOpen(t)
	if _, err := s.PutMessages(ctx, msg(dm, 1, "bob", "one")); err != nil {
		t.Fatal(err)
	}
	// The server: seq 2 a reaction, 3 a message, 4 an edit; unread 2 (1 and 3).
	if err := s.PutInbox(ctx, wire.InboxEntry{ConversationID: dm, Type: wire.Direct, Peer: "bob", LastSeq: 4, Unread: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(ctx, ev(2, "bob", wire.KindReaction, 1, "👍"), msg(dm, 3, "bob", "three"), ev(4, "bob", wire.KindEdit, 3, "3")); err != nil {
		t.Fatal(err)
	}
	e, err := s.InboxEntry(ctx, dm)
	if err != nil {
		t.Fatal(err)
	}
	if e.Unread != 2 {
		t.Fatalf("unread %d after the backlog the inbox had counted, want 2", e.Unread)
	}
	// A new event after them is a new gap; a new message is one more unread.
	if _, err := s.PutMessages(ctx, ev(5, "bob", wire.KindReaction, 3, "🎉"), msg(dm, 6, "bob", "six")); err != nil {
		t.Fatal(err)
	}
	if e, _ = s.InboxEntry(ctx, dm); e.Unread != 3 {
		t.Fatalf("unread %d, want 3", e.Unread)
	}
}
