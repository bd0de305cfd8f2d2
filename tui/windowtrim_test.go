package tui

import (
	"fmt"
	"testing"

	"github.com/chatterm/chat/wire"
)

// Issue 28: after the window drops its oldest, the messages arriving until
// the next trim are appended in place; the slice was cut to its length and
// each trim was followed by a copy of the whole window on the next append.
func TestTrimmedWindowTakesTheSlackInPlace(t *testing.T) {
	var m chatModel
	for i := range maxWindow + windowSlack + 1 {
		m.msgs = append(m.msgs, wire.Message{SeqNo: int64(i + 1), MessageID: fmt.Sprint(i + 1)})
	}
	m.trimOldest(maxWindow)
	if len(m.msgs) != maxWindow || m.msgs[0].SeqNo != windowSlack+2 {
		t.Fatalf("trimmed to %d messages from %d; want %d from %d", len(m.msgs), m.msgs[0].SeqNo, maxWindow, windowSlack+2)
	}
	first := &m.msgs[0]
	// The slack, and the commit that takes the window past it and has it
	// trimmed again: that one grew the slice (a copy of 1,250 messages
	// every 250, GC work besides) before its trim.
	for i := range windowSlack + 1 {
		m.msgs = append(m.msgs, wire.Message{SeqNo: int64(maxWindow + windowSlack + 2 + i)})
		if &m.msgs[0] != first {
			t.Fatalf("message %d after the trim copied the window", i+1)
		}
	}
}
