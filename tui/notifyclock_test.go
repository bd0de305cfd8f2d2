package tui

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
)

// A commit's unseen messages are told of (or held) by one reading of the
// clock, not one a message.
func TestCommitReadsTheClockOnce(t *testing.T) {
	var reads atomic.Int64
	be := fixture()
	h := newHarnessWith(t, be, 100, 30, func(o *Options) {
		o.Now = func() time.Time { reads.Add(1); return fixtureNow }
	})
	msgs := bobStream(8, 50)
	be.mu.Lock()
	be.msgs[bobConv] = append(be.msgs[bobConv], msgs...)
	be.mu.Unlock()
	before := reads.Load()
	h.send(client.MessagesEvent{Messages: msgs})
	if n := reads.Load() - before; n > 3 {
		t.Fatalf("a commit of %d unseen messages read the clock %d times", len(msgs), n)
	}
	if held := h.root().held.count; held != len(msgs)-1 {
		t.Fatalf("%d messages held after the first rang, want %d", held, len(msgs)-1)
	}
}
