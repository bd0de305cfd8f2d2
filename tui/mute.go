package tui

import (
	tea "charm.land/bubbletea/v2"
)

// Muted conversations: their new messages ring no bell and raise no desktop
// notification (they still count as unread). M in a chat toggles it; the
// backend keeps the set on this machine.

type (
	// mutesMsg is the muted set, read at start or after a login.
	mutesMsg struct {
		muted map[string]bool
		err   error
	}
	// toggleMuteMsg: the chat asked to mute or unmute its conversation.
	toggleMuteMsg struct{ conv string }
	// muteSavedMsg: a mute or unmute was stored (or failed to be).
	muteSavedMsg struct {
		conv  string
		muted bool
		err   error
	}
)

func loadMutes(c *common) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		m, err := c.be.Muted(ctx)
		return mutesMsg{muted: m, err: err}
	}
}

// toggleMute mutes or unmutes conv at once on screen, and stores it.
func (m *Model) toggleMute(conv string) tea.Cmd {
	if m.c.muted == nil {
		m.c.muted = map[string]bool{}
	}
	muted := !m.c.muted[conv]
	if muted {
		m.c.muted[conv] = true
	} else {
		delete(m.c.muted, conv)
	}
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		return muteSavedMsg{conv: conv, muted: muted, err: c.be.SetMuted(ctx, conv, muted)}
	}
}

func (m *Model) updateMutes(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case toggleMuteMsg:
		return m.toggleMute(msg.conv)
	case mutesMsg:
		if msg.err != nil {
			m.c.log.Warn("read muted conversations", "err", msg.err)
			return nil
		}
		m.c.muted = msg.muted
	case muteSavedMsg:
		if msg.err != nil {
			return flash("could not save the mute: "+errText(msg.err), true)
		}
		if msg.muted {
			return flash("muted: new messages here ring nothing (M again to unmute)", false)
		}
		return flash("unmuted", false)
	}
	return nil
}
