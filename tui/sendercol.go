package tui

import "github.com/charmbracelet/x/ansi"

// The sender column is as wide as the widest name among the conversation's
// members and senders, as weechat's prefix column grows with the longest
// nick, and is bounded like weechat's prefix_align_max: a fifth of the
// chat's width, never more than maxSenderW cells, so the text keeps most of
// a narrow screen (12 cells at 60 columns, as before) and a wide one shows
// whole the names a team uses ("Maximilian Featherstone"). A name wider
// than the column is cut with "…"; selecting its message (s) shows it whole
// in the header, and the members list (m) always does.
const maxSenderW = 24

// senderBound is the widest the sender column may be in a chat width cells
// wide.
func senderBound(width int) int { return min(maxSenderW, max(width/5, 3)) }

// cutSender is the full label of the selected message's sender when the
// sender column cut it, else "".
func (m chatModel) cutSender() string {
	if m.selected == 0 {
		return ""
	}
	x, ok := m.messageAt(m.selected)
	if !ok {
		return ""
	}
	if l := m.c.who(x.SenderID); ansi.StringWidth(l) > m.drawn.senderW {
		return l
	}
	return ""
}
