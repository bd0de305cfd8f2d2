package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
)

// A message the server refuses for good stays in the newest page, with the
// reason, so a UI that opens the conversation again still shows its text.
func TestRefusedMessageStaysInTheNewestPage(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.MaxMessageBytes = 16 }))
	aliceAPI := register(t, srv, "alice")
	register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	alice.waitFor("connected", func() bool { return alice.sess.State().Status == client.Connected })
	long := strings.Repeat("far too long ", 4)
	m, err := alice.sess.Enqueue(context.Background(), conv, long)
	if err != nil {
		t.Fatal(err)
	}
	alice.waitFor("the refusal", func() bool {
		alice.mu.Lock()
		defer alice.mu.Unlock()
		for _, ev := range alice.events {
			if f, ok := ev.(client.SendFailedEvent); ok && f.MessageID == m.MessageID {
				return true
			}
		}
		return false
	})
	p, err := alice.sess.History(context.Background(), conv, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Pending) != 1 || p.Pending[0].Content != long || p.Refused[m.MessageID] == "" {
		t.Fatalf("newest page after the refusal: pending %+v, refused %v", p.Pending, p.Refused)
	}
}
