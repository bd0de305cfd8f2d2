package client_test

import (
	"maps"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// Bob's device holds two of alice's messages and goes offline; alice reacts,
// edits one and deletes the other (through her own session: the events go
// through the outbox like messages). When bob's device comes back it catches
// up and applies the events in order: the cache shows the messages as they
// are now, his UI is told (ChangedEvent), and nothing counts as unread.
func TestEventsReachAnOfflineDeviceInOrder(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	px := newProxy(t, hostport(t, srv.URL))
	bob := startDevice(t, bobAPI, px.URL(), "bob")

	send := func(m wire.Message) wire.SendResponse {
		t.Helper()
		m.ConversationID = conv
		resp, err := alice.sess.SendMessage(bg, m)
		if err != nil {
			t.Fatalf("alice sends %+v: %v", m, err)
		}
		return resp
	}
	one := send(wire.Message{Content: "first draft"})
	two := send(wire.Message{Content: "a secret"})
	bob.waitFor("both messages", func() bool { return len(bob.cached(conv)) == 2 })

	px.set(false)
	bob.waitFor("offline", func() bool { return bob.sess.State().Status != client.Connected })
	send(wire.Message{Kind: wire.KindReaction, TargetSeq: one.SeqNo, Content: "👍"})
	send(wire.Message{Kind: wire.KindEdit, TargetSeq: one.SeqNo, Content: "final text"})
	send(wire.Message{Kind: wire.KindDelete, TargetSeq: two.SeqNo})
	reply := send(wire.Message{Content: "see above", ReplyTo: one.SeqNo})
	px.set(true)
	bob.waitFor("the reply", func() bool { return len(bob.cached(conv)) == 6 })

	m1, err := bob.store.Message(bg, conv, one.SeqNo)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Content != "final text" || !m1.Edited || !maps.Equal(m1.Reactions, map[string]string{"alice": "👍"}) {
		t.Fatalf("bob's copy of the edited message: %+v", m1)
	}
	m2, err := bob.store.Message(bg, conv, two.SeqNo)
	if err != nil {
		t.Fatal(err)
	}
	if !m2.Deleted || m2.Content != "" {
		t.Fatalf("bob's copy of the deleted message: %+v", m2)
	}
	if r, _ := bob.store.Message(bg, conv, reply.SeqNo); r.ReplyTo != one.SeqNo {
		t.Fatalf("bob's copy of the reply: %+v", r)
	}
	// The cache is written before the UI is told: wait for the telling.
	changed := map[int64]wire.Message{}
	bob.waitFor("bob's UI told of both changes", func() bool {
		bob.mu.Lock()
		defer bob.mu.Unlock()
		for _, ev := range bob.events {
			if c, ok := ev.(client.ChangedEvent); ok {
				changed[c.Message.SeqNo] = c.Message
			}
		}
		return changed[one.SeqNo].Content == "final text" && changed[two.SeqNo].Deleted
	})
	// Unread: the reply only; the events are not messages.
	e, err := bob.store.InboxEntry(bg, conv)
	if err != nil {
		t.Fatal(err)
	}
	if e.Unread != 3 || e.LastMessageBody != "see above" {
		t.Fatalf("bob's inbox: unread %d, preview %q; want 3 (two messages and the reply), see above: %+v", e.Unread, e.LastMessageBody, e)
	}
	// Alice's own cache agrees: her reaction as stored, her edit applied.
	a1, err := alice.store.Message(bg, conv, one.SeqNo)
	if err != nil {
		t.Fatal(err)
	}
	if a1.Content != "final text" || a1.Reactions["alice"] != "👍" {
		t.Fatalf("alice's own copy: %+v", a1)
	}
}
