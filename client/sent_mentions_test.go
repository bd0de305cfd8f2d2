package client_test

import (
	"slices"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// The sent answer carries the mentions the server resolved, and the
// sender's cache stores them with the message at once: no history fetch is
// needed for the sender's own lines to show who they mention.
func TestSentAnswerCarriesMentions(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI := register(t, srv, "alice")
	register(t, srv, "bob")
	register(t, srv, "carol")
	g, err := aliceAPI.CreateConversation(bg, wire.CreateConversationRequest{Type: wire.Group, Name: "ops", Members: []string{"bob"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	alice.waitFor("connected", func() bool { return alice.sess.State().Status == client.Connected })
	resp, err := alice.sess.Send(bg, g.ConversationID, "@bob and @carol (not a member) and @all: look")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bob", wire.MentionAll}
	if !slices.Equal(resp.Mentions, want) {
		t.Fatalf("the sent answer's mentions %q, want %q", resp.Mentions, want)
	}
	for _, m := range alice.cached(g.ConversationID) {
		if m.SeqNo == resp.SeqNo {
			if !slices.Equal(m.Mentions, want) {
				t.Fatalf("the sender's cache has mentions %q, want %q", m.Mentions, want)
			}
			return
		}
	}
	t.Fatalf("the sent message is not cached: %+v", alice.cached(g.ConversationID))
}
