package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// Membership events (who was added, left, renamed the group...) are lines of
// their own in the history, between the messages where they happened, and
// change the header and member list of the open conversation.

// drawMembershipEvent appends x's line, centred and faint; its seq is 0, like
// a separator's, so nothing selects it as a message to reply or react to.
func (m *chatModel) drawMembershipEvent(out []string, seqs []int64, widths []int, x wire.Message) ([]string, []int64, []int) {
	me := m.c.me
	line := x.MembershipLine(func(id string) string {
		if id == me {
			return "you"
		}
		return m.c.who(id)
	})
	// A name or a topic is a member's text: through the sanitiser, on one line.
	line = ansi.Truncate(termtext.OneLine(line), max(m.width-4, 1), "…")
	l := centre(m.c.styles.Subtle.Render("· "+line+" ·"), m.width)
	return append(out, l), append(seqs, 0), append(widths, ansi.StringWidth(l))
}

// membershipNames are the users membership events among msgs name: asked
// for with the page, since one removed or left is no longer among the
// members whose names the chat asks for.
func membershipNames(msgs []wire.Message) []string {
	var ids []string
	for _, x := range msgs {
		if wire.IsMembershipKind(x.Kind) {
			ids = append(ids, x.SenderID)
			ids = append(ids, x.Members...)
		}
	}
	return ids
}

// membershipChanged reloads the open conversation's name, topic and members
// after a membership event in it.
func (m *chatModel) membershipChanged(x wire.Message) tea.Cmd {
	if !wire.IsMembershipKind(x.Kind) || x.ConversationID != m.conv.ConversationID {
		return nil
	}
	c, id := m.c, x.ConversationID
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		cv, err := c.be.Conversation(ctx, id)
		return convInfoMsg{conv: cv, err: err}
	}
}

// kindLabel is the header's word for the conversation's kind.
func (m *chatModel) kindLabel() string {
	switch m.conv.Type {
	case wire.Group, wire.Channel:
		return m.conv.Type
	}
	return "direct"
}
