package tui

import "github.com/chatterm/chat/wire"

// heldNotes is what arrived unseen during a notification's hold-off, as
// much as its summary tells: how many, the first (told alone when it is the
// only one) and who sent them. Keeping every message instead cost a tenth of
// the TUI's CPU in a burst with the inbox shown (the slice grew by
// thousands a second, docs/tui.md) and held their texts for the hold-off.
type heldNotes struct {
	count   int
	first   wire.Message
	senders []string // sender ids, each once, in the order they first came
	seen    map[string]bool
}

func (h *heldNotes) add(m wire.Message) {
	if h.count == 0 {
		h.first = m
	}
	h.count++
	if !h.seen[m.SenderID] {
		if h.seen == nil {
			h.seen = map[string]bool{}
		}
		h.seen[m.SenderID] = true
		h.senders = append(h.senders, m.SenderID)
	}
}
