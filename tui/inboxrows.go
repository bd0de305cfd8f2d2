package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/wire"
)

// The inbox page was drawn whole on every View: each row through lipgloss
// (a dozen styles) and then every screen line measured again by fitBlock
// (grapheme segmentation), though a message moves one row. Each row is now
// kept fitted to the page with the key of what it was drawn from, and drawn
// again only when that key moves; a View of an unchanged inbox draws
// nothing.

// inboxRowKey is everything a full (two-line) inbox row is drawn from.
type inboxRowKey struct {
	e      wire.InboxEntry
	sel    bool
	width  int    // the inbox's, which the row is drawn to
	fit    int    // the page's, which its lines are cut or padded to
	when   string // shortWhen now: it moves with the clock
	styles *Styles
	names  int // the display names' version (names.go)
	me     string
}

// inboxRowDrawn is a row's lines, each exactly fit cells wide.
type inboxRowDrawn struct {
	key   inboxRowKey
	lines []string
}

// inboxShown is the inbox page's rows as last drawn, by conversation, and
// its title; shared by every copy of the model (common.inboxShown).
type inboxShown struct {
	rows      map[string]inboxRowDrawn
	titleKey  string
	title     string
	rowDraws  int // rows drawn, for the tests
	titleDraw int
}

// pageLines is the inbox page: exactly h lines of exactly w cells, as
// fitBlock(m.View(), w, h) gives them, from the rows kept where their key
// did not move.
func (m inboxModel) pageLines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	if m.compact || (m.err != nil && len(m.entries) == 0) || !m.loaded || len(m.entries) == 0 {
		// A sentence, not rows: as View draws it.
		return strings.Split(fitBlock(m.View(), w, h), "\n")
	}
	p := &m.c.inboxShown
	out := make([]string, 0, h)
	out = append(out, p.titleLine(m, w))
	rows := m.visibleRows()
	now := m.c.now()
	shown := 0
	for i := m.top; i < len(m.entries) && i < m.top+rows && len(out) < h; i++ {
		e := m.entries[i]
		k := inboxRowKey{e: e, sel: i == m.cursor, width: m.width, fit: w, when: shortWhen(e.LastMessageAt, now, m.c.loc),
			styles: m.c.styles, names: m.c.names.dir.Version(), me: m.c.me}
		d, ok := p.rows[e.ConversationID]
		if !ok || d.key != k {
			d = inboxRowDrawn{key: k, lines: strings.Split(m.row(e, k.sel), "\n")}
			for j, l := range d.lines {
				d.lines[j] = fitLine(l, w)
			}
			if p.rows == nil {
				p.rows = map[string]inboxRowDrawn{}
			}
			p.rows[e.ConversationID] = d
			p.rowDraws++
		}
		shown++
		out = append(out, d.lines[:min(len(d.lines), h-len(out))]...)
	}
	if len(p.rows) > 4*max(shown, 16) {
		// Rows scrolled past or of conversations gone: keep what shows.
		kept := make(map[string]inboxRowDrawn, shown)
		for i := m.top; i < len(m.entries) && i < m.top+shown; i++ {
			id := m.entries[i].ConversationID
			kept[id] = p.rows[id]
		}
		p.rows = kept
	}
	if len(out) < h {
		pad := strings.Repeat(" ", w)
		for len(out) < h {
			out = append(out, pad)
		}
	}
	return out
}

// titleLine is the page's first line, drawn again when its unread label,
// the width or the styles changed.
func (p *inboxShown) titleLine(m inboxModel, w int) string {
	_, label := m.totalUnread()
	k := fmt.Sprintf("%p|%d|%s", m.c.styles, w, label)
	if p.title != "" && k == p.titleKey {
		return p.title
	}
	p.titleKey, p.titleDraw = k, p.titleDraw+1
	p.title = fitLine(m.title(), w)
	return p.title
}

// fitLine cuts or pads one line to exactly w cells, as fitBlock does each.
func fitLine(l string, w int) string {
	lw := ansi.StringWidth(l)
	switch {
	case lw > w:
		return ansi.Truncate(l, w, "")
	case lw < w:
		return l + strings.Repeat(" ", w-lw)
	}
	return l
}
