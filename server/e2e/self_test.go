package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// A user's direct conversation with themselves is their note to self: it is
// created like any other, sits in the inbox, keeps history, and reaches the
// user's other devices live, but nobody else is waiting for it, so it leaves
// no pending delivery behind.
func TestNoteToSelf(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("alice")
	if conv != "dm:alice:alice" {
		t.Fatalf("note to self id = %q", conv)
	}
	if again := alice.direct("alice"); again != conv {
		t.Fatalf("second create gave %q", again)
	}
	a1, a2 := dial(t, alice), dial(t, alice)
	if sent := a1.sendWait(conv, "n1", "buy milk"); sent.SeqNo != 1 {
		t.Fatalf("sent = %+v", sent)
	}
	if m := a2.next(isMessage(conv)).Message; m.MessageID != "n1" || m.SenderID != "alice" || m.Content != "buy milk" {
		t.Fatalf("other device got %+v", m)
	}
	// A send over HTTP, without creating it first, finds the same conversation.
	if r := alice.send(conv, "n2", "and eggs"); r.SeqNo != 2 {
		t.Fatalf("second note has seq %d", r.SeqNo)
	}
	h := alice.history(conv, 0, 10)
	if len(h.Messages) != 2 || h.Messages[0].Content != "and eggs" || h.Messages[1].Content != "buy milk" { // newest first
		t.Fatalf("history: %+v", h.Messages)
	}
	var in wire.InboxResponse
	alice.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 1 || in.Conversations[0].ConversationID != conv || in.Conversations[0].Peer != "alice" ||
		in.Conversations[0].Type != wire.Direct || in.Conversations[0].LastMessageBody != "and eggs" {
		t.Fatalf("alice's inbox: %+v", in.Conversations)
	}
	st := alice.status(conv)
	if len(st) != 1 {
		t.Fatalf("status has %d members, want alice alone: %+v", len(st), st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Let the delivery worker's grace period pass: it must not queue anything for
	// the sender.
	time.Sleep(200 * time.Millisecond)
	if p, err := srv.Node.Service().PendingFor(ctx, "alice"); err != nil || len(p) != 0 {
		t.Fatalf("alice's pending deliveries = %+v, %v; want none", p, err)
	}
	// Nobody else sees it or can write to it.
	var e wire.ErrorResponse
	if st := bob.do("GET", "/v1/conversations/"+conv+"/messages?before_seq=0&limit=10", nil, &e); st != 403 && st != 404 {
		t.Fatalf("bob reads alice's notes: %d", st)
	}
	if st := bob.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "x", Content: "hi"}, &e); st != 403 && st != 404 {
		t.Fatalf("bob writes to alice's notes: %d", st)
	}
	bob.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 0 {
		t.Fatalf("bob's inbox: %+v", in.Conversations)
	}
}
