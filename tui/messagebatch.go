package tui

import (
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/wire"
)

// handleMessages applies the messages one receive commit stored
// (client.MessagesEvent, or a MessageEvent as a commit of one), in order,
// with what serves the whole batch done once: the inbox's selection
// found again, a reload of the inbox, one lookup of the senders' names. The
// chat takes the messages of its own conversation; the rest never reach it.
func (m *Model) handleMessages(msgs []wire.Message) tea.Cmd {
	var cmds []tea.Cmd
	var names []string
	var chatMsgs []wire.Message
	reload := false
	sel, _ := m.inbox.selected()
	var now time.Time // read once, by the first message to notify of
	for _, msg := range msgs {
		if !visible(msg) {
			// A reaction, edit or delete: no bell, no unread; the cache has
			// the inbox line as it now reads (an edited last message).
			reload = true
			names = appendNew(names, membershipNames([]wire.Message{msg})...)
			chatMsgs = m.forChat(chatMsgs, msg)
			continue
		}
		// Seen: on screen, at the bottom of the history, in a focused terminal.
		open := m.chat.active && m.chat.offset == 0 && m.chat.conv.ConversationID == msg.ConversationID
		names = appendNew(names, msg.SenderID)
		if msg.SenderID != m.c.me && (!open || m.blurred) {
			if now.IsZero() {
				now = m.c.now()
			}
			cmds = append(cmds, m.notify(msg, now))
		}
		if !m.inbox.takeBatched(msg, open || msg.SenderID == m.c.me) {
			reload = true // a conversation we do not know yet: the cache has it by now
		}
		chatMsgs = m.forChat(chatMsgs, msg)
	}
	// The chat's after the loop: nothing in it reads what they change (the
	// chat's offset stays 0 at the bottom and above 0 above it), and the chat
	// draws them once (chattake.go).
	cmds = append(cmds, m.chat.takeMessages(chatMsgs))
	m.inbox.selectID(sel.ConversationID)
	if reload {
		cmds = append(cmds, m.inbox.load())
	}
	return tea.Batch(append(cmds, m.c.askNames(names...))...)
}

// forChat appends msg to the chat's messages if it is of its conversation.
func (m *Model) forChat(chatMsgs []wire.Message, msg wire.Message) []wire.Message {
	if msg.ConversationID != m.chat.conv.ConversationID {
		return chatMsgs
	}
	return append(chatMsgs, msg)
}

// appendNew appends the ids not in list already.
func appendNew(list []string, ids ...string) []string {
	for _, id := range ids {
		if !slices.Contains(list, id) {
			list = append(list, id)
		}
	}
	return list
}
