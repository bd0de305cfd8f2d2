package main

import (
	"testing"
	"time"

	"github.com/chatterm/chat/internal/heapwarm"
	"github.com/chatterm/chat/internal/prefault/faulttest"
	"github.com/chatterm/chat/server/servertest"
)

// chat tail populates its heap's next pages before its first message: a
// tail that had waited quiet took about 1,100 page faults in the first
// 2,000-message burst it printed (the heap grown to its collector's goal for
// the first time), 10–20 µs of CPU a message on this VM (docs/tui.md,
// "chat tail's first burst"). In a process of its own, where nothing else
// has started heapwarm.
func TestTailWarmsTheHeap(t *testing.T) {
	faulttest.InFreshProcess(t, []string{"CHAT_TEST_BIN=" + chatBin}, func(t *testing.T) {
		srv := servertest.Start(t)
		alice := newUser(t, srv, "alice")
		newUser(t, srv, "bob")
		select {
		case <-heapwarm.Done():
			t.Fatal("the heap was populated before tail ran")
		default:
		}
		if _, errOut, code := alice.runApp(&app{}, time.Second, "tail"); code != exitInterrupted && code != 0 {
			t.Fatalf("chat tail: exit %d, stderr %q", code, errOut)
		}
		select {
		case <-heapwarm.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("chat tail did not populate its heap ahead")
		}
	})
}
