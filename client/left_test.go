package client_test

import (
	"slices"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// inboxHas says whether the device's cached inbox lists conv.
func (d *device) inboxHas(conv string) bool {
	es, err := d.sess.Inbox(bg, 0)
	if err != nil {
		d.t.Fatal(err)
	}
	return slices.ContainsFunc(es, func(e wire.InboxEntry) bool { return e.ConversationID == conv })
}

// A group the user leaves goes out of the inbox on every device of theirs:
// one online gets the left event, one offline meanwhile finds it missing
// from the server's inbox when it connects; added back, it returns to both.
func TestLeftGroupLeavesEveryDevicesInbox(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	g, err := aliceAPI.CreateConversation(bg, wire.CreateConversationRequest{Type: wire.Group, Name: "ops", Members: []string{"bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aliceAPI.SendNow(bg, g.ConversationID, wire.SendRequest{MessageID: wire.NewMessageID(), Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	online := startDevice(t, bobAPI, srv.URL, "bob")
	online.waitFor("the group in the inbox", func() bool { return online.inboxHas(g.ConversationID) })
	// The offline device cached the group before; it connects after bob left.
	offline := newDevice(t, bobAPI, srv.URL, "bob")
	if _, err := offline.store.PutMessages(bg, online.cached(g.ConversationID)...); err != nil {
		t.Fatal(err)
	}
	if !offline.inboxHas(g.ConversationID) {
		t.Fatal("the offline device's cache does not list the group")
	}

	if err := bobAPI.RemoveMember(bg, g.ConversationID, "bob"); err != nil {
		t.Fatal(err)
	}
	online.waitFor("the group out of the online device's inbox", func() bool { return !online.inboxHas(g.ConversationID) })
	if len(online.cached(g.ConversationID)) == 0 {
		t.Fatal("the left group's messages were dropped from the cache")
	}
	offline.run()
	offline.waitFor("connected", func() bool { return offline.sess.State().Status == client.Connected })
	offline.waitFor("the group out of the offline device's inbox", func() bool { return !offline.inboxHas(g.ConversationID) })

	if _, err := aliceAPI.AddMembers(bg, g.ConversationID, []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*device{online, offline} {
		d.waitFor("the group back in the inbox", func() bool { return d.inboxHas(g.ConversationID) })
	}
}
