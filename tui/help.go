package tui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpModel is the key card shown with ?: every binding, by where it applies.
type helpModel struct {
	c      *common
	width  int
	height int
	top    int // first line shown, when the card is one column taller than the screen
	page   int // the page shown, when the card is in pages
}

// scroll moves the card by lines, within what there is to see.
func (m *helpModel) scroll(by int) {
	room := max(m.height-4, 2)
	m.top = min(max(m.top+by, 0), max(len(m.oneColumn())-(room-1), 0))
}

// turn shows the next (by 1) or previous (by -1) page, round; false when the
// card is not in pages.
func (m *helpModel) turn(by int) bool {
	n := len(m.pages())
	if n < 2 {
		return false
	}
	m.page = ((m.page+by)%n + n) % n
	return true
}

func newHelpModel(c *common) helpModel { return helpModel{c: c} }

func (m *helpModel) SetSize(w, h int) { m.width, m.height = w, h }

func (m helpModel) View() string {
	s := m.c.styles
	var lines []string
	if pages := m.pages(); len(pages) > 0 {
		// In columns, a page at a time when they are more than the screen is
		// wide for: every key is on a page, none behind a scroll.
		p := min(m.page, len(pages)-1)
		lines = slices.Clone(pages[p])
		if len(pages) > 1 {
			lines = append(lines, "", s.Subtle.Render(
				"page "+strconv.Itoa(p+1)+"/"+strconv.Itoa(len(pages))+" · →/← or tab turn · any other key closes"))
		}
	} else {
		lines = m.oneColumn()
		if room := max(m.height-4, 2); room < len(lines) {
			// Taller than the screen: a window on it, the last line saying how
			// to see the rest.
			top := min(m.top, len(lines)-(room-1))
			more := s.Subtle.Render("↑/↓ for more · any other key closes")
			lines = append(lines[top:top+room-1:top+room-1], more)
		}
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(m.width-6, 10), "…")
	}
	return s.Overlay.Render(strings.Join(lines, "\n"))
}

// sectionBlocks is each section of the card, its title then its keys.
func (m helpModel) sectionBlocks() [][]string {
	s := m.c.styles
	var out [][]string
	for _, sec := range m.c.keys.sections() {
		b := []string{s.Title.Render(sec.Title)}
		for _, k := range sec.Bindings {
			h := k.Help()
			b = append(b, s.Key.Render(padRight(h.Key, 10))+" "+s.KeyDesc.Render(h.Desc))
		}
		out = append(out, b)
	}
	return out
}

// oneColumn is the whole card in one column, sections parted by a blank line:
// what a screen too narrow for columns scrolls through.
func (m helpModel) oneColumn() []string {
	var all []string
	for _, b := range m.sectionBlocks() {
		if len(all) > 0 {
			all = append(all, "")
		}
		all = append(all, b...)
	}
	return all
}

// pages is the card in columns as tall as the screen, as many side by side
// as its width holds, a page per screenful; nil when no column fits (too
// small a screen: oneColumn then scrolls). A section is never cut between
// columns, so one taller than the screen also means nil.
func (m helpModel) pages() [][]string {
	const (
		gap    = 3
		footer = 2 // the blank line and the page line
	)
	room := max(m.height-4-footer, 2)
	width := max(m.width-6, 10)
	var cols [][]string
	for _, b := range m.sectionBlocks() {
		if len(b) > room {
			return nil
		}
		// In columns the titles alone part the sections: a blank line each
		// would cost the card a column.
		if n := len(cols); n > 0 && len(cols[n-1])+len(b) <= room {
			cols[n-1] = append(cols[n-1], b...)
		} else {
			cols = append(cols, slices.Clone(b))
		}
	}
	colWidth := func(c []string) int {
		w := 0
		for _, l := range c {
			w = max(w, lipgloss.Width(l))
		}
		return w
	}
	var pages [][]string
	var blocks []string
	used := 0
	flush := func() {
		if len(blocks) > 0 {
			pages = append(pages, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, blocks...), "\n"))
		}
		blocks, used = nil, 0
	}
	for _, c := range cols {
		w := colWidth(c)
		if w > width {
			return nil
		}
		if len(blocks) > 0 && used+gap+w > width {
			flush()
		}
		if len(blocks) > 0 {
			// The gap goes on the column before: JoinHorizontal pads each
			// block to its style's width.
			blocks[len(blocks)-1] = lipgloss.NewStyle().PaddingRight(gap).Render(blocks[len(blocks)-1])
			used += gap
		}
		blocks = append(blocks, lipgloss.NewStyle().Width(w).Render(strings.Join(c, "\n")))
		used += w
	}
	flush()
	return pages
}

// helpTurn is the way a key turns the card's pages.
func helpTurn(key string) int {
	switch key {
	case "left", "h", "shift+tab":
		return -1
	}
	return 1
}
