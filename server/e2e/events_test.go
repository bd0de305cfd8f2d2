package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// Replies, reactions, edits and deletes on the running server (both backends:
// CHATSERVER_TEST_BACKEND): sent over the socket and over HTTP, caught up by
// a device that was offline in seq order, with history showing each message as
// the events left it; a reaction sent twice leaves none; a delete of an
// archived message leaves nothing in the cold tier to read it from.
func TestEventsEndToEnd(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.ArchiveAfter = time.Nanosecond // everything is "old" at once
		c.ArchiveInterval = 20 * time.Millisecond
	}))
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	first := alice.send(conv, "m1", "lunch at noon?")
	second := alice.send(conv, "m2", "a secret")
	testenv.WaitFor(t, wait, func() bool { return metric(t, srv, "chat_messages_archived_total") >= 2 })

	aws := dial(t, alice)
	send := func(f wire.Frame) wire.Frame {
		t.Helper()
		f.Type, f.ID, f.ConversationID = wire.TypeSend, aws.id(), conv
		aws.write(f)
		got := aws.next(func(x wire.Frame) bool { return x.ID == f.ID })
		if got.Type != wire.TypeSent {
			t.Fatalf("%+v answered %+v", f, got)
		}
		return got
	}
	like := send(wire.Frame{MessageID: "r1", Kind: wire.KindReaction, TargetSeq: first.SeqNo, Content: "👍"})
	var edit wire.SendResponse
	if st := alice.do("POST", "/v1/conversations/"+conv+"/messages",
		wire.SendRequest{MessageID: "e1", Kind: wire.KindEdit, TargetSeq: first.SeqNo, Content: "lunch at one?"}, &edit); st != http.StatusCreated {
		t.Fatalf("edit over HTTP: %d", st)
	}
	del := send(wire.Frame{MessageID: "d1", Kind: wire.KindDelete, TargetSeq: second.SeqNo})
	reply := send(wire.Frame{MessageID: "m3", Content: "see above", ReplyTo: first.SeqNo})
	// The same reaction again takes it back; the answer says so.
	if again := send(wire.Frame{MessageID: "r2", Kind: wire.KindReaction, TargetSeq: first.SeqNo, Content: "👍"}); again.Content != "" {
		t.Fatalf("a second 👍 was stored as %q, want it taken back", again.Content)
	}

	// bob was offline for all of it: catch-up brings each in seq order.
	bws := dial(t, bob)
	want := []struct {
		seq  int64
		kind string
	}{{first.SeqNo, ""}, {second.SeqNo, ""}, {like.SeqNo, wire.KindReaction}, {edit.SeqNo, wire.KindEdit},
		{del.SeqNo, wire.KindDelete}, {reply.SeqNo, ""}}
	for _, w := range want {
		m := bws.next(isMessage(conv)).Message
		if m.SeqNo != w.seq || m.Kind != w.kind {
			t.Fatalf("catch-up: got seq %d kind %q, want seq %d kind %q", m.SeqNo, m.Kind, w.seq, w.kind)
		}
	}

	h := bob.history(conv, 0, 100)
	byseq := map[int64]wire.Message{}
	for _, m := range h.Messages {
		byseq[m.SeqNo] = m
	}
	if m := byseq[first.SeqNo]; m.Content != "lunch at one?" || !m.Edited || len(m.Reactions) != 0 {
		t.Fatalf("the edited message, its reaction taken back: %+v", m)
	}
	if m := byseq[second.SeqNo]; !m.Deleted || m.Content != "" {
		t.Fatalf("the deleted archived message: %+v", m)
	}
	if m := byseq[reply.SeqNo]; m.ReplyTo != first.SeqNo {
		t.Fatalf("the reply: %+v", m)
	}
	// Unread counts messages: three, not eight rows.
	var in wire.InboxResponse
	if st := bob.do("GET", "/v1/inbox", nil, &in); st != http.StatusOK || len(in.Conversations) != 1 || in.Conversations[0].Unread != 3 {
		t.Fatalf("bob's inbox: %d %+v", st, in)
	}
}
