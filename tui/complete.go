package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/wire"
)

// Tab completion of mentions in the composer (docs/tui.md, "Mentions"): tab
// after "@" and the start of a member's user id completes it from the open
// chat's members (and @all, @here in a group); the start of a member's
// display name, or of a word of it, completes to their id too, since a
// mention is by id. Tab again goes on to the next that fits, as in weechat
// and irssi. It completes the word the text ends
// with, which is where the cursor is while one types.

// mentionCompletion is a completion under way: the text before the word, the
// names that fit, and the one shown.
type mentionCompletion struct {
	base    string
	options []string
	shown   int
}

// mentionCandidates are the names tab offers in this chat: the other
// members' ids, then all and here in a group.
func (m *chatModel) mentionCandidates() []string {
	var out []string
	for _, p := range m.participants {
		if p.UserID != m.c.me {
			out = append(out, p.UserID)
		}
	}
	slices.Sort(out)
	if m.conv.Type == wire.Group {
		out = append(out, "all", "here")
	}
	return out
}

// completeMention handles tab in the composer; false when there is nothing
// to complete (the key then does what it did before).
func (m *chatModel) completeMention() bool {
	if c := m.completing; c != nil {
		c.shown = (c.shown + 1) % len(c.options)
		m.compose.SetValue(c.base + "@" + c.options[c.shown] + " ")
		return true
	}
	value := m.compose.Value()
	start := strings.LastIndexAny(value, " \n\t") + 1
	word := value[start:]
	if !strings.HasPrefix(word, "@") {
		return false
	}
	prefix := strings.ToLower(word[1:])
	var options []string
	for _, id := range m.mentionCandidates() {
		if strings.HasPrefix(id, prefix) || nameFits(m.c.names.dir.DisplayName(id), prefix) {
			options = append(options, id)
		}
	}
	if len(options) == 0 {
		return false
	}
	m.completing = &mentionCompletion{base: value[:start], options: options}
	m.compose.SetValue(value[:start] + "@" + options[0] + " ")
	return true
}

// nameFits reports whether a display name, or a word of it, starts with
// prefix, letter case aside ("dy" fits "Bob Dylan").
func nameFits(name, prefix string) bool {
	if name == "" || prefix == "" {
		return false
	}
	name = strings.ToLower(name)
	if strings.HasPrefix(name, prefix) {
		return true
	}
	for _, word := range strings.Fields(name) {
		if strings.HasPrefix(word, prefix) {
			return true
		}
	}
	return false
}

// endCompletion ends a completion under way at any key but tab: what it
// wrote stays as typed.
func (m *chatModel) endCompletion(msg tea.KeyPressMsg) {
	if msg.String() != "tab" {
		m.completing = nil
	}
}
