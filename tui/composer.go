package tui

import (
	"slices"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/mattn/go-runewidth"
)

// composer is the message box: a few lines of text, soft-wrapped at its width,
// that grows from one row to composerMaxRows and then scrolls to the cursor.
//
// It replaces bubbles' textarea, which wraps every line again on every key
// and every drawing: 2,000 characters arriving as keystrokes (a paste
// without bracketed paste) took ~10 s to appear, 20,000 took minutes. Here
// each logical line keeps where its rows start, and an edit wraps again only
// from the row before the one it touched (greedy wrapping starts afresh at
// every row), so typing at the end of a long line costs a row, not the line;
// a drawing touches only the rows shown.
type composer struct {
	lines [][]rune // logical lines; never empty
	wraps []rowStarts
	row   int // the cursor's logical line
	col   int // the cursor's rune index in it
	// goal is the cell column up and down aim for, kept across short rows
	// (-1: the cursor's own).
	goal int

	width   int // in cells, the prompt included
	top     int // the first visual row shown
	focused bool

	prompt      string
	placeholder string
	newline     key.Binding
	theme       composerTheme

	// size is the text's length in bytes (Len), kept as edits change it;
	// text is Value's string, built when asked for and kept until the text
	// changes again (textRev). Building it on every key, as the chat's
	// typing check and the size near the limit asked, cost 2,000 keys two
	// million runes.
	size    int
	textRev int
	text    *builtText // shared by the model's copies, as the lines are
	// built counts the runes building Value has written, for the test that
	// typing does not build the text per key.
	built *int
	// wrapped counts the runes wrapping has looked at, for the test that
	// typing stays linear in the text (it is shared by the model's copies).
	wrapped *int
	// rev counts changes to what the composer shows (text, cursor, focus,
	// size, styles): a drawing is kept while it stands still.
	rev int
}

// builtText is the composer's text as a string, for the revision it was built at.
type builtText struct {
	rev int
	s   string
}

// composerTheme is how the composer is drawn.
type composerTheme struct {
	prompt, promptBlurred, placeholder, cursor lipgloss.Style
}

func composerStyles(s *Styles) composerTheme {
	return composerTheme{prompt: s.Accent, promptBlurred: s.Faint, placeholder: s.Faint,
		cursor: lipgloss.NewStyle().Reverse(true)}
}

const (
	composerMaxRows = 6
	composerTab     = "    " // a tab typed or pasted: the box has no tab stops
)

// rowStarts is where each visual row of a logical line starts (rune
// indices; the first is 0), valid up to dirty: rows from the one holding
// rune dirty on must be found again.
type rowStarts struct {
	starts []int
	lastW  int // the last row's width in cells
	dirty  int // -1: all valid
}

func newComposer(c *common) composer {
	return composer{
		lines: [][]rune{{}}, wraps: []rowStarts{{dirty: 0}}, goal: -1,
		prompt:      "› ",
		placeholder: "Write a message…  (enter sends, alt+enter or ctrl+j for a new line)",
		newline:     c.keys.Newline,
		theme:       composerStyles(c.styles),
		text:        &builtText{rev: -1},
	}
}

func (m *composer) SetStyles(t composerTheme) { m.theme = t; m.rev++ }
func (m *composer) Focus() tea.Cmd            { m.focused = true; m.rev++; return nil }
func (m *composer) Blur()                     { m.focused = false; m.rev++ }
func (m composer) Focused() bool              { return m.focused }
func (m composer) Width() int                 { return m.width }

// SetWidth sets the width in cells, the prompt included; every line wraps again.
func (m *composer) SetWidth(w int) {
	if w == m.width {
		return
	}
	m.width = w
	for i := range m.wraps {
		m.wraps[i].dirty = 0
	}
	m.rev++
	m.scrollToCursor()
}

func (m composer) textWidth() int { return max(m.width-runewidth.StringWidth(m.prompt), 1) }

// Value is the text, lines joined by "\n".
func (m composer) Value() string {
	if m.text != nil && m.text.rev == m.textRev {
		return m.text.s
	}
	s := m.build()
	if m.text != nil {
		*m.text = builtText{rev: m.textRev, s: s}
	}
	return s
}

// Len is len(Value()), without building it.
func (m composer) Len() int { return m.size }

// Empty reports whether the box holds no text.
func (m composer) Empty() bool { return len(m.lines) == 1 && len(m.lines[0]) == 0 }

// TextRev changes whenever the text does (not when only the cursor moves).
func (m composer) TextRev() int { return m.textRev }

// Reset empties the box.
func (m *composer) Reset() {
	m.lines, m.wraps = [][]rune{{}}, []rowStarts{{dirty: 0}}
	m.row, m.col, m.top, m.goal = 0, 0, 0, -1
	m.size = 0
	m.changed()
}

// SetValue replaces the text; the cursor goes to its end.
func (m *composer) SetValue(s string) {
	m.Reset()
	m.insert(s)
}

// Height is the rows the box takes on screen.
func (m *composer) Height() int { return min(max(m.totalRows(), 1), composerMaxRows) }

// changed records that the text changed: Value builds it again when asked.
func (m *composer) changed() {
	m.textRev++
	m.rev++
}

// build joins the lines into the text.
func (m composer) build() string {
	n := 0
	for _, l := range m.lines {
		n += len(l) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range m.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, r := range l {
			b.WriteRune(r)
		}
	}
	if m.built != nil {
		*m.built += n
	}
	return b.String()
}

// runeBytes is the UTF-8 length of rs.
func runeBytes(rs []rune) int {
	n := 0
	for _, r := range rs {
		n += utf8.RuneLen(r)
	}
	return n
}

// touch marks logical line i for wrapping again from rune at on.
func (m *composer) touch(i, at int) {
	w := &m.wraps[i]
	if w.dirty < 0 || at < w.dirty {
		w.dirty = at
	}
}

// rowsOf brings line i's row starts up to date and returns them.
func (m *composer) rowsOf(i int) *rowStarts {
	w := &m.wraps[i]
	if w.dirty < 0 {
		return w
	}
	// Greedy wrapping starts afresh at each row, so the rows before the one
	// holding the edit stand; the row before it goes too, since a word
	// shortened there may now fit at its end.
	var kept []int
	if len(w.starts) > 0 {
		k, _ := slices.BinarySearch(w.starts, w.dirty+1) // the first row after the edit's
		kept = w.starts[:max(k-2, 0)+1]
	}
	if m.wrapped != nil {
		from := 0
		if len(kept) > 0 {
			from = kept[len(kept)-1]
		}
		*m.wrapped += len(m.lines[i]) - from
	}
	w.starts, w.lastW = wrapRows(m.lines[i], m.textWidth(), kept)
	w.dirty = -1
	return w
}

// wrapRows appends to starts (rows kept, each a rune index) the rows of r from
// the end of the kept ones on, fitted to w cells: a row breaks after its last
// space, or where it is full when it has none. It returns the starts and the
// last row's width.
func wrapRows(r []rune, w int, starts []int) ([]int, int) {
	i := 0
	if n := len(starts); n > 0 {
		i = starts[n-1]
	} else {
		starts = append(starts, 0)
	}
	for {
		cells, j, brk := 0, i, -1
		for j < len(r) {
			cw := runewidth.RuneWidth(r[j])
			if cells+cw > w {
				break
			}
			cells += cw
			j++
			if r[j-1] == ' ' {
				brk = j
			}
		}
		if j >= len(r) {
			return starts, cells
		}
		next := j
		if r[j] != ' ' && brk > i {
			next = brk
		}
		next = max(next, i+1) // a rune wider than the box still moves on
		starts = append(starts, next)
		i = next
	}
}

// lineRows is how many visual rows line i takes: its wrapped rows, and one
// more when its last row is full and the cursor sits after it.
func (m *composer) lineRows(i int) int {
	w := m.rowsOf(i)
	n := len(w.starts)
	if w.lastW >= m.textWidth() && len(m.lines[i]) > 0 {
		n++
	}
	return n
}

func (m *composer) totalRows() int {
	n := 0
	for i := range m.lines {
		n += m.lineRows(i)
	}
	return n
}

// cursorRow is the cursor's row within its logical line and its cell column.
func (m *composer) cursorRow() (row, cell int) {
	w := m.rowsOf(m.row)
	k, found := slices.BinarySearch(w.starts, m.col)
	if !found {
		k--
	}
	start := w.starts[k]
	cell = runewidth.StringWidth(string(m.lines[m.row][start:m.col]))
	if k == len(w.starts)-1 && cell >= m.textWidth() {
		return k + 1, 0 // after a full last row: the extra row
	}
	return k, cell
}

// cursorVisual is the cursor's visual row in the whole box.
func (m *composer) cursorVisual() int {
	n := 0
	for i := range m.row {
		n += m.lineRows(i)
	}
	k, _ := m.cursorRow()
	return n + k
}

func (m *composer) scrollToCursor() {
	if m.width <= 0 {
		return
	}
	v, h := m.cursorVisual(), m.Height()
	switch {
	case v < m.top:
		m.top = v
	case v >= m.top+h:
		m.top = v - h + 1
	}
	m.top = max(min(m.top, m.totalRows()-h), 0)
}

// insert puts text at the cursor: newlines start lines, tabs become spaces,
// other control characters go.
func (m *composer) insert(s string) {
	if s == "" {
		return
	}
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\t", composerTab).Replace(s)
	parts := strings.Split(s, "\n")
	for pi, p := range parts {
		if pi > 0 {
			m.splitLine()
		}
		rs := []rune(p)
		rs = slices.DeleteFunc(rs, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
		if len(rs) == 0 {
			continue
		}
		l := m.lines[m.row]
		m.size += runeBytes(rs)
		m.lines[m.row] = slices.Insert(l, m.col, rs...)
		m.touch(m.row, m.col)
		m.col += len(rs)
	}
	m.goal = -1
	m.changed()
	m.scrollToCursor()
}

// splitLine breaks the cursor's line at the cursor.
func (m *composer) splitLine() {
	l := m.lines[m.row]
	tail := slices.Clone(l[m.col:])
	m.lines[m.row] = l[:m.col]
	m.touch(m.row, m.col)
	m.lines = slices.Insert(m.lines, m.row+1, tail)
	m.wraps = slices.Insert(m.wraps, m.row+1, rowStarts{dirty: 0})
	m.row, m.col = m.row+1, 0
	m.size++ // the newline
}

// joinNext joins line i and the one after it.
func (m *composer) joinNext(i int) {
	at := len(m.lines[i])
	m.lines[i] = append(m.lines[i], m.lines[i+1]...)
	m.touch(i, at)
	m.lines = slices.Delete(m.lines, i+1, i+2)
	m.wraps = slices.Delete(m.wraps, i+1, i+2)
	m.size-- // the newline
}

// deleteRange removes runes [from, to) of the cursor's line and puts the
// cursor at from.
func (m *composer) deleteRange(from, to int) {
	if from >= to {
		return
	}
	m.size -= runeBytes(m.lines[m.row][from:to])
	m.lines[m.row] = slices.Delete(m.lines[m.row], from, to)
	m.touch(m.row, from)
	m.col = from
	m.changed()
}

// wordLeft is where the word before the cursor starts (spaces before it
// skipped); wordRight where the word after it ends.
func (m *composer) wordLeft() int {
	l, i := m.lines[m.row], m.col
	for i > 0 && l[i-1] == ' ' {
		i--
	}
	for i > 0 && l[i-1] != ' ' {
		i--
	}
	return i
}

func (m *composer) wordRight() int {
	l, i := m.lines[m.row], m.col
	for i < len(l) && l[i] == ' ' {
		i++
	}
	for i < len(l) && l[i] != ' ' {
		i++
	}
	return i
}

// moveVertical moves the cursor d visual rows, aiming at the goal column.
func (m *composer) moveVertical(d int) {
	k, cell := m.cursorRow()
	if m.goal < 0 {
		m.goal = cell
	}
	line := m.row
	k += d
	for k < 0 {
		if line == 0 {
			return
		}
		line--
		k += m.lineRows(line)
	}
	for k >= m.lineRows(line) {
		if line == len(m.lines)-1 {
			return
		}
		k -= m.lineRows(line)
		line++
	}
	w := m.rowsOf(line)
	l := m.lines[line]
	if k >= len(w.starts) { // the extra row after a full last one
		m.row, m.col = line, len(l)
		return
	}
	start, end := w.starts[k], len(l)
	if k+1 < len(w.starts) {
		end = w.starts[k+1] - 1 // not past the row's end onto the next
	}
	col, cells := start, 0
	for col < end {
		cw := runewidth.RuneWidth(l[col])
		if cells+cw > m.goal {
			break
		}
		cells += cw
		col++
	}
	m.row, m.col = line, col
}

// Update applies a key or a paste.
func (m composer) Update(msg tea.Msg) (composer, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		m.insert(msg.Content)
		return m, nil
	case tea.KeyPressMsg:
		m.key(msg)
	}
	return m, nil
}

func (m *composer) key(msg tea.KeyPressMsg) {
	if key.Matches(msg, m.newline) {
		m.insert("\n")
		return
	}
	vertical := false
	before := m.rev
	l := len(m.lines[m.row])
	switch msg.String() {
	case "left", "ctrl+b":
		switch {
		case m.col > 0:
			m.col--
		case m.row > 0:
			m.row--
			m.col = len(m.lines[m.row])
		}
	case "right", "ctrl+f":
		switch {
		case m.col < l:
			m.col++
		case m.row < len(m.lines)-1:
			m.row, m.col = m.row+1, 0
		}
	case "up":
		vertical = true
		m.moveVertical(-1)
	case "down":
		vertical = true
		m.moveVertical(1)
	case "home", "ctrl+a":
		m.col = 0
	case "end", "ctrl+e":
		m.col = l
	case "ctrl+home", "alt+<":
		m.row, m.col = 0, 0
	case "ctrl+end", "alt+>":
		m.row = len(m.lines) - 1
		m.col = len(m.lines[m.row])
	case "alt+left", "alt+b", "ctrl+left":
		m.col = m.wordLeft()
	case "alt+right", "alt+f", "ctrl+right":
		m.col = m.wordRight()
	case "backspace", "ctrl+h":
		switch {
		case m.col > 0:
			m.deleteRange(m.col-1, m.col)
		case m.row > 0:
			m.row--
			m.col = len(m.lines[m.row])
			m.joinNext(m.row)
			m.changed()
		}
	case "delete", "ctrl+d":
		switch {
		case m.col < l:
			m.deleteRange(m.col, m.col+1)
		case m.row < len(m.lines)-1:
			m.joinNext(m.row)
			m.changed()
		}
	case "alt+backspace", "ctrl+w":
		m.deleteRange(m.wordLeft(), m.col)
	case "alt+delete", "alt+d":
		end := m.wordRight()
		m.deleteRange(m.col, end)
	case "ctrl+k":
		m.deleteRange(m.col, l)
	case "ctrl+u":
		m.deleteRange(0, m.col)
	default:
		if msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			m.insert(msg.Text)
		}
		return
	}
	if !vertical {
		m.goal = -1
	}
	if m.rev == before {
		m.rev++ // the cursor moved
	}
	m.scrollToCursor()
}

// View draws the rows shown: the prompt, the text and, when focused, the
// cursor as a reversed cell. Each row is at most Width cells.
func (m *composer) View() string {
	lines, _ := m.viewLines()
	return strings.Join(lines, "\n")
}

// viewLines is View's rows and their widths in cells.
func (m *composer) viewLines() ([]string, []int) {
	t := m.theme
	promptSt := t.promptBlurred
	if m.focused {
		promptSt = t.prompt
	}
	prompt := promptSt.Render(m.prompt)
	pw := runewidth.StringWidth(m.prompt)
	tw := m.textWidth()
	if len(m.lines) == 1 && len(m.lines[0]) == 0 {
		ph := []rune(runewidth.Truncate(m.placeholder, tw-1, "…"))
		line := prompt
		if m.focused && len(ph) > 0 {
			line += t.cursor.Render(t.placeholder.Render(string(ph[:1]))) + t.placeholder.Render(string(ph[1:]))
		} else {
			line += t.placeholder.Render(string(ph))
		}
		return []string{line}, []int{pw + runewidth.StringWidth(string(ph))}
	}
	h := m.Height()
	out := make([]string, 0, h)
	widths := make([]int, 0, h)
	cursorV := m.cursorVisual()
	v := 0
	for i := 0; i < len(m.lines) && v < m.top+h; i++ {
		n := m.lineRows(i)
		if v+n <= m.top {
			v += n
			continue
		}
		w, l := m.rowsOf(i), m.lines[i]
		for k := range n {
			if v < m.top {
				v++
				continue
			}
			if v >= m.top+h {
				break
			}
			start, end := len(l), len(l)
			if k < len(w.starts) {
				start = w.starts[k]
				if k+1 < len(w.starts) {
					end = w.starts[k+1]
				}
			}
			row := l[start:end]
			var b strings.Builder
			b.WriteString(prompt)
			cells := pw + runewidth.StringWidth(string(row))
			if m.focused && v == cursorV {
				at := m.col - start
				b.WriteString(string(row[:at]))
				if at < len(row) {
					b.WriteString(t.cursor.Render(string(row[at])))
					b.WriteString(string(row[at+1:]))
				} else {
					b.WriteString(t.cursor.Render(" "))
					cells++
				}
			} else {
				b.WriteString(string(row))
			}
			out = append(out, b.String())
			widths = append(widths, cells)
			v++
		}
	}
	return out, widths
}
