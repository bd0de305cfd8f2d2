package client_test

import (
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// TestHistoryKeepsAMessageSentDuringTheRead: the server's answer to an outbox
// message commits (outbox → messages) while History is between its reads.
// The page must still hold the message, stored or pending: a chat reopened by
// a restore while its resends were answered showed neither (scripts/
// tmux-restore.sh, bob's own resent answer missing from his screen).
func TestHistoryKeepsAMessageSentDuringTheRead(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI := register(t, srv, "alice")
	register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := newDevice(t, aliceAPI, srv.URL, "alice") // not run: the test answers the outbox itself
	m, err := alice.sess.EnqueueID(bg, conv, "typed", "sent while the chat reopens")
	if err != nil {
		t.Fatal(err)
	}
	client.SetHistoryHook(alice.sess, func() {
		client.SetHistoryHook(alice.sess, nil)
		resp, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: m.MessageID, Content: m.Content})
		if err != nil {
			t.Errorf("send: %v", err)
			return
		}
		if _, err := alice.store.CompleteSends(bg, resp); err != nil {
			t.Errorf("complete the send: %v", err)
		}
	})
	page, err := alice.sess.History(bg, conv, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range page.Messages {
		ids = append(ids, "stored:"+x.MessageID)
	}
	for _, x := range page.Pending {
		ids = append(ids, "pending:"+x.MessageID)
	}
	found := false
	for _, x := range append(page.Messages, page.Pending...) {
		found = found || x.MessageID == "typed"
	}
	if !found {
		t.Fatalf("the page lost the message whose send completed during the read: %v", ids)
	}
	if left, err := alice.store.Outbox(bg, conv); err != nil || len(left) != 0 {
		t.Fatalf("outbox after the send: %v, %v", left, err)
	}
}
