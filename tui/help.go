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

// body is the whole card, line by line: two columns when they fit, else one.
func (m helpModel) body() []string {
	s := m.c.styles
	secs := m.c.keys.sections()
	render := func(sec helpSection) []string {
		out := []string{s.Title.Render(sec.Title)}
		for _, b := range sec.Bindings {
			h := b.Help()
			out = append(out, s.Key.Render(padRight(h.Key, 10))+" "+s.KeyDesc.Render(h.Desc))
		}
		return out
	}
	// Lists on the left, the chat's sections on the right.
	var cols [][]string
	var left, right []string
	for i, sec := range secs {
		col := &right
		if i < 2 {
			col = &left
		}
		if len(*col) > 0 {
			*col = append(*col, "")
		}
		*col = append(*col, render(sec)...)
	}
	colW := 0
	for _, l := range append(append([]string{}, left...), right...) {
		colW = max(colW, lipgloss.Width(l))
	}
	var body string
	if m.width >= 2*colW+10 {
		cols = [][]string{left, right}
		lw := lipgloss.NewStyle().Width(colW + 3).Render(strings.Join(cols[0], "\n"))
		body = lipgloss.JoinHorizontal(lipgloss.Top, lw, strings.Join(cols[1], "\n"))
	} else {
		body = strings.Join(append(append(left, ""), right...), "\n")
	}
	return strings.Split(body, "\n")
}
