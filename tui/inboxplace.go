package tui

import "github.com/chatterm/chat/wire"

// A message moves one conversation: placing its entry where a stable sort
// by time (newest first) would put it costs the entries it passes, where
// sorting the whole list again per message cost O(n log n) with every
// message of a burst (inboxModel.sortEntries; docs/tui.md, "chat tail and
// the inbox shown"). The list is sorted whenever a message comes (a load or
// an upsert sorts it), so only entry i can be out of place.

// place moves entry i, whose time changed, to where sortEntries would put
// it: before the entries older than it, after those as new or newer that
// were before it, and before those as new that were after it.
func (m *inboxModel) place(i int) {
	e := m.entries[i]
	j := i
	for j > 0 && e.LastMessageAt.After(m.entries[j-1].LastMessageAt) {
		j--
	}
	if j == i {
		for j+1 < len(m.entries) && m.entries[j+1].LastMessageAt.After(e.LastMessageAt) {
			j++
		}
	}
	switch {
	case j < i:
		copy(m.entries[j+1:i+1], m.entries[j:i])
	case j > i:
		copy(m.entries[i:j], m.entries[i+1:j+1])
	default:
		return
	}
	m.entries[j] = e
}

// takeBatched is applyMessage for one message of a receive commit
// (client.MessagesEvent): the entry placed, the selection left for the
// caller to find again once for the batch (selectID).
func (m *inboxModel) takeBatched(msg wire.Message, seen bool) (known bool) {
	i, known := m.takeMessage(msg, seen)
	if i >= 0 {
		m.place(i)
	}
	return known
}
