package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// leftMsg: Backend.Leave answered for the chat the user left from inside it.
type leftMsg struct {
	conv wire.InboxEntry
	err  error
}

// leaveKey serves L in a chat being read: the first press asks, a second
// one in a row leaves the group or channel (any other key in between asks
// again), as D D deletes. A direct chat or a note to self has no leaving.
func (m *Model) leaveKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if !matches(msg, m.c.keys.Leave) {
		m.confirmLeave = ""
		return nil, false
	}
	conv := m.chat.conv
	if strings.HasPrefix(conv.ConversationID, wire.DirectPrefix) {
		return flash("a direct chat cannot be left", false), true
	}
	if m.confirmLeave != conv.ConversationID {
		m.confirmLeave = conv.ConversationID
		return flash("leave "+termtext.OneLine(conv.Name)+"? press L again", false), true
	}
	m.confirmLeave = ""
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		return leftMsg{conv: conv, err: c.be.Leave(ctx, conv.ConversationID)}
	}, true
}

// left closes the chat the user just left (if it is still the open one)
// and reads the inbox again, which no longer lists it.
func (m *Model) left(msg leftMsg) tea.Cmd {
	if msg.err != nil {
		return flash("not left: "+errText(msg.err), true)
	}
	if m.page == pageChat && m.chat.conv.ConversationID == msg.conv.ConversationID {
		m.page = pageInbox
		m.chat.close()
		m.resize()
	}
	return tea.Batch(m.inbox.load(), flash("you left "+termtext.OneLine(msg.conv.Name), false))
}
