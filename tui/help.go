package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpModel is the key card shown with ?: every binding, by where it applies.
type helpModel struct {
	c      *common
	width  int
	height int
	top    int // first line shown, when the card is taller than the screen
}

// scroll moves the card by lines, within what there is to see.
func (m *helpModel) scroll(by int) {
	room := max(m.height-4, 2)
	m.top = min(max(m.top+by, 0), max(len(m.body())-(room-1), 0))
}

func newHelpModel(c *common) helpModel { return helpModel{c: c} }

func (m *helpModel) SetSize(w, h int) { m.width, m.height = w, h }

func (m helpModel) View() string {
	s := m.c.styles
	lines := m.body()
	if room := max(m.height-4, 2); room < len(lines) {
		// Taller than the screen: a window on it, the last line saying how
		// to see the rest.
		top := min(m.top, len(lines)-(room-1))
		more := s.Subtle.Render("↑/↓ for more · any other key closes")
		lines = append(lines[top:top+room-1:top+room-1], more)
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(m.width-6, 10), "…")
	}
	return s.Overlay.Render(strings.Join(lines, "\n"))
}

// body is the whole card, line by line: the sections in order, filled into
// as many columns as the screen is tall for, when they fit its width (120×35
// shows it all without scrolling); else one column, which scrolls.
func (m helpModel) body() []string {
	s := m.c.styles
	render := func(sec helpSection) []string {
		out := []string{s.Title.Render(sec.Title)}
		for _, b := range sec.Bindings {
			h := b.Help()
			out = append(out, s.Key.Render(padRight(h.Key, 10))+" "+s.KeyDesc.Render(h.Desc))
		}
		return out
	}
	room := max(m.height-4, 2)
	var all []string
	var cols [][]string
	for _, sec := range m.c.keys.sections() {
		b := render(sec)
		if len(all) > 0 {
			all = append(all, "")
		}
		all = append(all, b...)
		// In columns the titles alone part the sections: a blank line each
		// would cost the card a third column at 120×35.
		if n := len(cols); n > 0 && len(cols[n-1])+len(b) <= room {
			cols[n-1] = append(cols[n-1], b...)
		} else {
			cols = append(cols, b)
		}
	}
	if len(cols) < 2 {
		return all
	}
	const gap = 3
	width, blocks := 0, make([]string, len(cols))
	for i, c := range cols {
		w := 0
		for _, l := range c {
			w = max(w, lipgloss.Width(l))
		}
		if i < len(cols)-1 {
			w += gap
		}
		width += w
		blocks[i] = lipgloss.NewStyle().Width(w).Render(strings.Join(c, "\n"))
	}
	if width > max(m.width-6, 10) {
		return all
	}
	return strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, blocks...), "\n")
}
