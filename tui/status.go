package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
)

// statusLine: connection state on the left, a notice or the key hints on the right.
func (m Model) statusLine() string {
	s := m.c.styles
	var left string
	switch {
	case m.page == pageLogin:
		left = s.StatusBar.Render(" not logged in")
	default:
		left = m.connText()
	}
	var right string
	switch {
	case m.flash != "" && m.flashErr:
		right = s.StatusBad.Render(m.flash + " ")
	case m.flash != "":
		right = s.StatusBar.Render(m.flash + " ")
	default:
		right = s.StatusBar.Render(m.hints() + " ")
	}
	lw, rw := lipgloss.Width(left), lipgloss.Width(right)
	if lw+rw+2 > m.width {
		right = s.StatusBar.Render(ansi.Truncate(ansi.Strip(right), max(m.width-lw-2, 0), "…"))
		rw = lipgloss.Width(right)
	}
	gap := s.StatusBar.Render(strings.Repeat(" ", max(m.width-lw-rw, 0)))
	return ansi.Truncate(left+gap+right, m.width, "")
}

func (m Model) connText() string {
	s := m.c.styles
	who := ""
	if m.c.me != "" {
		who = s.StatusBar.Render(" · " + m.c.me)
	}
	unsent := ""
	if m.conn.Unsent > 0 {
		unsent = fmt.Sprintf(" with %d unsent", m.conn.Unsent)
	}
	switch m.conn.Status {
	case client.Connected:
		txt := " ● connected"
		if m.conn.Unsent > 0 {
			txt += fmt.Sprintf(", sending %d", m.conn.Unsent)
		}
		return s.StatusOK.Render(txt) + who
	case client.Connecting:
		return s.StatusWarn.Render(" ◌ connecting"+unsent) + who
	case client.Reconnecting:
		secs := int(m.conn.RetryAt.Sub(m.c.now()).Round(time.Second) / time.Second)
		txt := " ◌ reconnecting"
		if secs > 0 {
			txt += fmt.Sprintf(" in %d s", secs)
		}
		return s.StatusWarn.Render(txt+unsent) + who + s.StatusBar.Render(" · ctrl+r now")
	default:
		return s.StatusBad.Render(" ○ offline"+unsent) + who
	}
}

func (m Model) hints() string {
	var bs []helpKV
	switch m.overlay {
	case overlayFinder:
		bs = m.finder.ShortHelp()
	case overlaySearch:
		bs = m.search.ShortHelp()
	case overlayMentions:
		bs = m.mentions.ShortHelp()
	case overlayNewChat:
		bs = m.newChat.ShortHelp()
	case overlayHelp:
		bs = []helpKV{{"any key", "close"}}
	case overlayMembers:
		bs = m.members.ShortHelp()
	case overlayChannels:
		bs = m.channels.ShortHelp()
	default:
		switch m.page {
		case pageInbox:
			bs = m.inbox.ShortHelp()
		case pageChat:
			bs = m.chat.ShortHelp()
		}
	}
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.key + " " + b.desc
	}
	return strings.Join(parts, " · ")
}
