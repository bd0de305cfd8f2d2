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
}

func newHelpModel(c *common) helpModel { return helpModel{c: c} }

func (m *helpModel) SetSize(w, h int) { m.width, m.height = w, h }

func (m helpModel) View() string {
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
	var cols [][]string
	// Two columns when they fit, else one; the card is cut to the screen.
	left := append(render(secs[0]), "")
	left = append(left, render(secs[1])...)
	right := append(render(secs[2]), "")
	right = append(right, render(secs[3])...)
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
	lines := strings.Split(body, "\n")
	if max(m.height-4, 1) < len(lines) {
		lines = lines[:max(m.height-4, 1)]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(m.width-6, 10), "…")
	}
	return s.Overlay.Render(strings.Join(lines, "\n"))
}
