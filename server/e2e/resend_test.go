package e2e

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// A client retrying one message_id (its answer lost, a --lines loop resent)
// gets the first answer every time: no seq_no is burned, no send budget spent,
// and the next new message takes the next number.
func TestResendsBurnNoSeqAndNoRate(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.SendRate = 3 }))
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	first := alice.send(conv, "same-id", "hello")
	ws := dial(t, alice)
	for i := range 10 { // over HTTP and over the socket, past the rate of 3/s
		if i%2 == 0 {
			var again wire.SendResponse
			if st := alice.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "same-id", Content: "hello"}, &again); st != http.StatusOK || !reflect.DeepEqual(again, first) {
				t.Fatalf("HTTP resend %d: status %d, %+v; first %+v", i, st, again, first)
			}
			continue
		}
		if f := ws.sendWait(conv, "same-id", "hello"); f.SeqNo != first.SeqNo {
			t.Fatalf("socket resend %d: seq %d, want %d", i, f.SeqNo, first.SeqNo)
		}
	}
	// The budget is untouched: two new messages still fit in this second.
	second := alice.send(conv, "new-1", "next")
	if second.SeqNo != first.SeqNo+1 {
		t.Fatalf("next message got seq %d after resends, want %d", second.SeqNo, first.SeqNo+1)
	}
	var in wire.InboxResponse
	bob.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 1 || in.Conversations[0].Unread != 2 || in.Conversations[0].LastSeq != 2 {
		t.Fatalf("bob's inbox after 10 resends: %+v, want 2 unread at seq 2", in.Conversations)
	}
}

// A seq_no taken by a write that then failed leaves a gap; unread counts
// count messages, so the gap never shows as an unread message.
func TestUnreadCountsMessagesNotSeqNumbers(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	alice.send(conv, "m1", "one")
	// Numbers taken and never written: what a write failing after its seq_no
	// was handed out leaves behind.
	seqr := srv.Node.Service().Config().Sequencer
	for range 5 {
		if _, err := seqr.Next(context.Background(), conv); err != nil {
			t.Fatal(err)
		}
	}
	last := alice.send(conv, "m2", "two")
	if last.SeqNo != 7 {
		t.Fatalf("second message at seq %d, want 7 (after a gap of 5)", last.SeqNo)
	}
	var in wire.InboxResponse
	bob.do("GET", "/v1/inbox", nil, &in)
	if e := in.Conversations[0]; e.Unread != 2 || e.LastSeq != 7 {
		t.Fatalf("bob's inbox: %+v, want 2 unread at seq 7", e)
	}
	bob.do("POST", "/v1/conversations/"+conv+"/read", wire.SeqRequest{SeqNo: 1}, nil)
	bob.do("GET", "/v1/inbox", nil, &in)
	if e := in.Conversations[0]; e.Unread != 1 {
		t.Fatalf("after reading seq 1: %d unread, want 1", e.Unread)
	}
}
