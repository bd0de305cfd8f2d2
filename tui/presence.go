package tui

import (
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Who else is around in the open chat: the members typing now, and whether
// the others are online (or when last seen), shown in the chat header.

// presenceEvery is how often an open chat asks again who is online: presence
// is not pushed, and a minute-old "last seen" is still true enough.
const presenceEvery = 30 * time.Second

type (
	presenceMsg struct {
		conv string
		resp wire.PresenceResponse
		err  error
	}
	// presenceTickMsg: time to ask again, if the chat is still open.
	presenceTickMsg struct{ conv string }
	// typingExpiredMsg: a typing hint may have run out; draw the header again.
	typingExpiredMsg struct{ conv string }
)

// loadPresence asks who is online in the conversation.
func loadPresence(c *common, conv string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		resp, err := c.be.Presence(ctx, conv)
		return presenceMsg{conv: conv, resp: resp, err: err}
	}
}

func presenceTick(conv string) tea.Cmd {
	return tea.Tick(presenceEvery, func(time.Time) tea.Msg { return presenceTickMsg{conv: conv} })
}

// sendTyping tells the others the user is typing; the client sends at most one
// frame every few seconds however often this runs, and never blocks.
func sendTyping(c *common, conv string) tea.Cmd {
	return func() tea.Msg {
		c.be.Typing(conv)
		return nil
	}
}

// updatePresence handles the messages of this file for the open chat.
func (m *chatModel) updatePresence(msg tea.Msg) tea.Cmd {
	id := m.conv.ConversationID
	switch msg := msg.(type) {
	case presenceMsg:
		if msg.conv != id || msg.err != nil {
			return nil
		}
		m.presence = map[string]wire.MemberPresence{}
		for _, p := range msg.resp.Members {
			m.presence[p.UserID] = p
		}
	case presenceTickMsg:
		if msg.conv != id || !m.active {
			return nil // the chat was closed or changed: its ticking ends
		}
		return tea.Batch(loadPresence(m.c, id), presenceTick(id))
	case client.TypingEvent:
		if msg.ConversationID != id {
			return nil
		}
		if m.typers == nil {
			m.typers = map[string]time.Time{}
		}
		m.typers[msg.UserID] = msg.At
		return tea.Tick(client.TypingShownFor, func(time.Time) tea.Msg { return typingExpiredMsg{conv: id} })
	}
	return nil
}

// stoppedTyping forgets a typing hint once the typist's message is here.
func (m *chatModel) stoppedTyping(user string) { delete(m.typers, user) }

// aroundText is the header's note on the others: who is typing, else who is
// online, or that we are not (disconnected); "" when there is nothing to say.
func (m chatModel) aroundText(now time.Time) string {
	var typing []string
	for u, at := range m.typers {
		if now.Sub(at) < client.TypingShownFor {
			typing = append(typing, m.c.who(u))
		}
	}
	slices.Sort(typing)
	switch len(typing) {
	case 0:
	case 1:
		return typing[0] + " is typing…"
	case 2:
		return typing[0] + " and " + typing[1] + " are typing…"
	default:
		return fmt.Sprintf("%d people are typing…", len(typing))
	}
	if m.disconnected {
		// Presence heard before the connection dropped would claim the
		// others are online while we cannot know, and cannot be seen.
		return "you are offline"
	}
	if len(m.presence) == 0 {
		return ""
	}
	if !wire.IsGroupType(m.conv.Type) {
		for _, p := range m.presence {
			return client.PresenceWords(p, now)
		}
	}
	online := 0
	for _, p := range m.presence {
		if p.Online && !p.Hidden {
			online++
		}
	}
	if online == 0 {
		return ""
	}
	return fmt.Sprintf("%d online", online)
}
