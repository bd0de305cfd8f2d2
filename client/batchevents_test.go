package client_test

import (
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
)

// With MessageBatches a session reports each receive commit's new messages
// in one MessagesEvent, in the order they came, and never a MessageEvent:
// over a burst and a stream, one event per commit, each the size of its
// commit, and every message once in seq order. The sender's boundary, which
// each commit also moves, comes after the messages that moved it.
func TestMessageBatchesOneEventPerCommit(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	bob := newDevice(t, bobAPI, srv.URL, "bob", func(c *client.SessionConfig) { c.MessageBatches = true })
	log := &receiveLog{}
	log.hook(bob.sess)
	bob.run()
	waitConnected(bob)
	ids := sendRuns(t, aliceAPI, conv, sendRun{300, 0}, sendRun{40, 5 * time.Millisecond})
	bob.waitFor("every message", func() bool { return len(bob.cached(conv)) == len(ids) })
	checkOnceInOrder(t, bob, conv, ids)
	_, commits := log.reset()

	var got []string
	var sizes []int
	bob.mu.Lock()
	events := slices.Clone(bob.events)
	bob.mu.Unlock()
	sawMessages := false
	for _, ev := range events {
		switch ev := ev.(type) {
		case client.MessageEvent:
			t.Fatalf("a MessageEvent (seq %d) from a session with MessageBatches", ev.Message.SeqNo)
		case client.MessagesEvent:
			sizes = append(sizes, len(ev.Messages))
			for _, m := range ev.Messages {
				got = append(got, m.MessageID)
			}
			sawMessages = true
		case client.StatusEvent:
			if ev.Status.UserID == "alice" && !sawMessages {
				t.Fatalf("alice's boundary moved to %d before any of her messages was reported", ev.Status.LastReadSeq)
			}
		}
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("the events reported %d messages, want the %d sent, once each in order", len(got), len(ids))
	}
	t.Logf("%d messages in %d commits, reported in %d events: %v", len(ids), len(commits), len(sizes), sizes)
	if !slices.Equal(sizes, commits) {
		t.Fatalf("events of %v messages for commits of %v: want one event per commit, of its size", sizes, commits)
	}
	if len(sizes) >= len(ids)/2 {
		t.Fatalf("%d events for %d messages: the burst's commits were not batched, and the test tests nothing", len(sizes), len(ids))
	}
}
