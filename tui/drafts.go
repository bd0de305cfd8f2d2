package tui

import (
	"maps"

	tea "charm.land/bubbletea/v2"
)

// Drafts and input history are kept across restarts by the backend (in the
// account's cache). They are read at start; a draft is stored when its chat
// is left and all of them when the program quits, and a text sent is added
// to the input history, which also clears its draft. What is typed is not
// written per key: a crash loses the open chat's unsent text, not the
// others'.

type (
	// keptInputMsg is the drafts and input history kept from before.
	keptInputMsg struct {
		drafts map[string]string
		sent   map[string][]string
		err    error
	}
	// keptSavedMsg: a draft or input was stored (or failed to be).
	keptSavedMsg struct{ err error }
)

func loadKeptInput(c *common) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		drafts, err := c.be.Drafts(ctx)
		if err != nil {
			return keptInputMsg{err: err}
		}
		sent, err := c.be.InputHistory(ctx)
		return keptInputMsg{drafts: drafts, sent: sent, err: err}
	}
}

// saveDrafts stores drafts (an empty text removes one).
func saveDrafts(c *common, drafts map[string]string) tea.Cmd {
	if len(drafts) == 0 {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		return keptSavedMsg{err: c.be.SaveDrafts(ctx, drafts)}
	}
}

// keepInput stores a text sent, for recall after a restart.
func keepInput(c *common, conv, text string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		return keptSavedMsg{err: c.be.AddInput(ctx, conv, text)}
	}
}

// applyKeptInput merges what was kept under what this run has already
// typed and sent: the kept text never replaces newer text.
func (m *Model) applyKeptInput(msg keptInputMsg) {
	if msg.err != nil {
		m.c.log.Warn("read drafts and input history", "err", msg.err)
		return
	}
	if m.chat.drafts == nil {
		m.chat.drafts = map[string]string{}
	}
	for conv, text := range msg.drafts {
		if _, ok := m.chat.drafts[conv]; !ok {
			m.chat.drafts[conv] = text
		}
	}
	if id := m.chat.conv.ConversationID; id != "" && m.chat.compose.Value() == "" {
		if text, ok := msg.drafts[id]; ok {
			m.chat.compose.SetValue(text)
			m.chat.afterLayoutChange()
		}
	}
	for conv, list := range msg.sent {
		m.c.inputs.keep(conv, list)
	}
}

// allDrafts is every draft as it stands, the open chat's from its composer
// (empty: removed).
func (m *Model) allDrafts() map[string]string {
	drafts := maps.Clone(m.chat.drafts)
	if drafts == nil {
		drafts = map[string]string{}
	}
	if id := m.chat.conv.ConversationID; id != "" {
		drafts[id] = m.chat.compose.Value()
	}
	return drafts
}

// quit stores the drafts and sends the read reports still waiting
// (markread.go), then ends the program: one command, so the program cannot
// end before they are stored. A failure is logged (the screen is going);
// the drafts of chats left earlier were stored then.
func (m *Model) quit() tea.Cmd {
	c, drafts, marks := m.c, m.allDrafts(), m.c.unsentMarks()
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		if err := c.be.SaveDrafts(ctx, drafts); err != nil {
			c.log.Error("save drafts at quit", "err", err)
		}
		for id, seq := range marks {
			if err := c.be.MarkRead(ctx, id, seq); err != nil {
				c.log.Error("mark read at quit", "conv", id, "seq", seq, "err", err)
			}
		}
		return tea.Quit()
	}
}
