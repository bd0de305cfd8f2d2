package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/chatterm/chat/internal/termtext"
)

// The chat's header (its title, kind, presence or typing, and a scroll
// hint) and the rule under it were drawn through lipgloss and measured on
// every View, though they change a few times a minute: they are now kept
// with the plain texts they were drawn from and drawn again when one moves.

// headerKey is what the header and the rule are drawn from.
type headerKey struct {
	styles              *Styles
	width               int
	title, kind, around string
	right               string
	rightStyle          int // which style right is drawn in (headerRight*)
	muted               bool
	sender              string // the selected message's sender, cut in its column (sendercol.go)
}

const (
	headerRightNone = iota
	headerRightSubtle
	headerRightUnread
)

// headerShown is the header and rule as last drawn; shared by every copy of
// the model (common.header).
type headerShown struct {
	key          headerKey
	header, rule string
	headerW      int // the header's width in cells
	draws        int // for the tests
}

// headerKey gathers the header's texts; cheap, unlike drawing them.
func (m chatModel) headerKey() headerKey {
	k := headerKey{styles: m.c.styles, width: m.width, title: m.c.title(m.conv), kind: m.kindLabel(),
		around: m.aroundText(m.c.now()), muted: m.c.muted[m.conv.ConversationID], sender: m.cutSender()}
	if n := len(m.participants); n > 0 && k.kind != "direct" {
		k.kind = fmt.Sprintf("%s · %d members", k.kind, n)
	}
	if m.topic != "" {
		k.kind += " · " + termtext.OneLine(m.topic) // the admins' text: sanitised
	}
	switch {
	case m.toOldest:
		k.right, k.rightStyle = fmt.Sprintf("↑ to the first message: %d loaded ", len(m.msgs)), headerRightSubtle
	case m.newHere > 0:
		k.right, k.rightStyle = fmt.Sprintf("↓ %d new ", m.newHere), headerRightUnread
	case m.offset > 0 || m.behind:
		k.right, k.rightStyle = "↓ G to the newest ", headerRightSubtle
	case m.stale:
		k.right, k.rightStyle = "offline: from the cache ", headerRightSubtle
	}
	return k
}

// headerLines returns the header, its width, and the rule under it (the
// chat's width), drawn again only when their key moved.
func (m chatModel) headerLines() (header string, headerW int, rule string) {
	p := &m.c.header
	k := m.headerKey()
	if p.header != "" && p.key == k {
		return p.header, p.headerW, p.rule
	}
	s := m.c.styles
	right := ""
	switch k.rightStyle {
	case headerRightSubtle:
		right = s.Subtle.Render(k.right)
	case headerRightUnread:
		right = s.Unread.Render(k.right)
	}
	header = s.Title.Render(" "+k.title) + s.Subtle.Render("  "+k.kind)
	if k.around != "" {
		header += s.Accent.Render("  " + k.around)
	}
	if k.muted {
		header += s.Subtle.Render("  muted")
	}
	if k.sender != "" {
		header += s.Accent.Render("  ▶ " + k.sender)
	}
	header += strings.Repeat(" ", max(k.width-lipgloss.Width(header)-lipgloss.Width(right), 1)) + right
	p.key, p.header, p.headerW, p.rule = k, header, lipgloss.Width(header), s.Faint.Render(strings.Repeat("─", k.width))
	p.draws++
	return p.header, p.headerW, p.rule
}
