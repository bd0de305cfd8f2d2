package tui

import (
	"slices"

	"github.com/chatterm/chat/wire"
)

// takeHidden is takeMessages for a chat off screen (the inbox in its place,
// shown false): a chat is shown again only through open, which starts it
// afresh from the cache, and the cache held these messages before they
// reached the TUI. Merging them, trimming the window and looking at the read
// boundary was work nobody would see (a chat left open behind the inbox took
// a burst a message at a time). Only our own messages' pending copies
// retire, as merge retires them: unsent counts them when quitting.
func (m *chatModel) takeHidden(msgs []wire.Message) {
	if len(m.pending) == 0 {
		return
	}
	kept := make([]wire.Message, 0, len(m.pending))
	for _, p := range m.pending {
		if !slices.ContainsFunc(msgs, func(msg wire.Message) bool { return msg.MessageID == p.MessageID }) {
			kept = append(kept, p)
		}
	}
	m.pending = kept
}
