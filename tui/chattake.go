package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// takeMessages gives the chat a receive commit's messages (client.MessagesEvent),
// in arrival order. When the reader is at the bottom and every message comes
// after the newest loaded — a live stream's case — they are merged and drawn
// once, the read boundary moved once: handed over one at a time, the chat drew
// its history, laid itself out and looked at its read boundary after each
// (a tenth of a steady stream's CPU with the chat open). Anything else
// (the reader scrolled up, a gap filled, the window behind the newest) goes a
// message at a time, as a MessageEvent each, which keeps the reader's place
// for each.
func (m *chatModel) takeMessages(msgs []wire.Message) tea.Cmd {
	if len(msgs) == 0 {
		return nil
	}
	if !m.shown {
		m.takeHidden(msgs) // chathidden.go
		return nil
	}
	if !m.appendsAtBottom(msgs) {
		cmds := make([]tea.Cmd, 0, len(msgs))
		for _, msg := range msgs {
			var cmd tea.Cmd
			*m, cmd = m.Update(client.MessageEvent{Message: msg})
			cmds = append(cmds, cmd)
		}
		return tea.Batch(cmds...)
	}
	for _, msg := range msgs {
		m.stoppedTyping(msg.SenderID)
		m.lastSeq = max(m.lastSeq, msg.SeqNo)
	}
	m.merge(msgs)
	m.render()
	cmds := make([]tea.Cmd, 0, len(msgs)+1)
	for _, msg := range msgs {
		cmds = append(cmds, m.membershipChanged(msg))
	}
	m.trimLive()
	cmds = append(cmds, m.maybeMarkRead())
	return tea.Batch(cmds...)
}

// appendsAtBottom is whether msgs, all of this chat's conversation, each
// come after the newest loaded and after each other, with the reader at
// the bottom of a window that holds the newest.
func (m *chatModel) appendsAtBottom(msgs []wire.Message) bool {
	if m.behind || m.offset != 0 {
		return false
	}
	var newest int64
	if n := len(m.msgs); n > 0 {
		newest = m.msgs[n-1].SeqNo
	}
	for _, msg := range msgs {
		if msg.ConversationID != m.conv.ConversationID || msg.SeqNo <= newest {
			return false
		}
		newest = msg.SeqNo
	}
	return true
}
