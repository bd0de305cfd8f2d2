package tui

import tea "charm.land/bubbletea/v2"

// Input history, per conversation, as shells and weechat keep it: up in an
// empty composer brings back the last message sent there, up again the one
// before, down goes forward (past the newest: an empty composer again). A
// recalled text that is edited stops the browsing: up and down move in it.
// Kept across restarts by the backend (drafts.go).

// maxInputHistory bounds the texts kept per conversation.
const maxInputHistory = 100

type inputHistory struct {
	sent map[string][]string // by conversation, oldest first
}

func (h *inputHistory) add(conv, text string) {
	if h.sent == nil {
		h.sent = map[string][]string{}
	}
	list := h.sent[conv]
	if n := len(list); n > 0 && list[n-1] == text {
		return
	}
	list = append(list, text)
	if len(list) > maxInputHistory {
		list = list[len(list)-maxInputHistory:]
	}
	h.sent[conv] = list
}

// keep puts texts sent before this run under those sent in it.
func (h *inputHistory) keep(conv string, before []string) {
	if h.sent == nil {
		h.sent = map[string][]string{}
	}
	list := append(append([]string{}, before...), h.sent[conv]...)
	if len(list) > maxInputHistory {
		list = list[len(list)-maxInputHistory:]
	}
	h.sent[conv] = list
}

// recall handles up and down in the composer; ok is false when the key is
// not for the history (it moves the cursor instead).
func (m *chatModel) recall(up bool) (cmd tea.Cmd, ok bool) {
	list := m.c.inputs.sent[m.conv.ConversationID]
	value := m.compose.Value()
	browsing := m.histPos > 0 && m.histPos <= len(list) && value == list[len(list)-m.histPos]
	if !browsing && (value != "" || !up) {
		m.histPos = 0
		return nil, false
	}
	switch {
	case up && m.histPos < len(list):
		m.histPos++
	case up:
		return nil, true // at the oldest: stay
	default:
		m.histPos--
	}
	if m.histPos == 0 {
		m.compose.Reset()
	} else {
		m.compose.SetValue(list[len(list)-m.histPos])
	}
	m.afterLayoutChange()
	return nil, true
}
