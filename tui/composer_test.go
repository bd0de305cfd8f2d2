package tui

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func testComposer(width int) composer {
	c := &common{styles: NewStyles(true), keys: DefaultKeyMap()}
	m := newComposer(c)
	m.SetWidth(width)
	m.Focus()
	return m
}

func typeText(m composer, s string) composer {
	for _, r := range s {
		if r == '\n' {
			m, _ = m.Update(keyMsg("ctrl+j"))
			continue
		}
		m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return m
}

func press(m composer, keys ...string) composer {
	for _, k := range keys {
		m, _ = m.Update(keyMsg(k))
	}
	return m
}

// rowsText is the composer's rows as the screen shows them, without the
// prompt, styles or the cursor's trailing cell.
func rowsText(m composer) []string {
	lines, _ := m.viewLines()
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(ansi.Strip(l), m.prompt), " ")
	}
	return out
}

// checkWraps says whether every line's rows, kept up to date edit by edit,
// are the rows wrapping it from scratch gives.
func checkWraps(t *testing.T, m *composer, when string) {
	t.Helper()
	for i := range m.lines {
		got := m.rowsOf(i)
		want, wantW := wrapRows(m.lines[i], m.textWidth(), nil)
		if !slices.Equal(got.starts, want) || got.lastW != wantW {
			t.Fatalf("%s: line %d rows %v (last %d cells), wrapping afresh gives %v (%d)", when, i, got.starts, got.lastW, want, wantW)
		}
	}
}

func TestComposerWrapsAtSpaces(t *testing.T) {
	m := testComposer(12) // 10 cells of text after "› "
	m = typeText(m, "hello world again and a verylongwordthatdoesnotfit")
	// Seven rows; the box shows six, and follows the cursor (at the end).
	want := []string{"world", "again and", "a", "verylongwo", "rdthatdoes", "notfit"}
	if got := rowsText(m); !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if m.Height() != composerMaxRows {
		t.Fatalf("height %d, want %d", m.Height(), composerMaxRows)
	}
	m = press(m, "ctrl+home")
	if got := rowsText(m); got[0] != "hello" || got[5] != "rdthatdoes" {
		t.Fatalf("at the start the rows shown are %q", got)
	}
	for _, l := range func() []string { l, _ := m.viewLines(); return l }() {
		if w := ansi.StringWidth(l); w > 12 {
			t.Fatalf("row %q is %d cells, wider than the box", ansi.Strip(l), w)
		}
	}
}

// A long text typed key by key wraps as it would all at once, through
// inserts and deletes in the middle and a change of width; the text is
// what was typed.
func TestComposerLongInputEditsAndWraps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "chat", "message", "with", "words", "of", "many", "lengths", "incomprehensibilities", "日本語", "x"}
	var b strings.Builder
	for b.Len() < 2000 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	text := b.String()
	m := typeText(testComposer(40), text)
	if m.Value() != text {
		t.Fatalf("value is not what was typed")
	}
	checkWraps(t, &m, "after typing")

	// Into the middle: home, some words right, type, delete some.
	m = press(m, "ctrl+home")
	for range 30 {
		m = press(m, "alt+right")
	}
	at := m.col
	m = typeText(m, " INSERTED ")
	rs := []rune(text)
	want := string(rs[:at]) + " INSERTED " + string(rs[at:])
	if m.Value() != want {
		t.Fatalf("after an insert at rune %d the value is not what it should be", at)
	}
	checkWraps(t, &m, "after an insert in the middle")
	m = press(m, "backspace", "backspace", "backspace", "ctrl+w", "delete", "delete")
	checkWraps(t, &m, "after deletes in the middle")
	if got, want := m.Value(), string(rs[:at])+" "+string(rs[at+2:]); got != want {
		t.Fatalf("after three backspaces, ctrl+w and two deletes the value is not what it should be:\n%q\nwant\n%q", got[max(len(want)/2-40, 0):], want[max(len(want)/2-40, 0):])
	}

	// Narrower, then wider: every row found again.
	m.SetWidth(23)
	checkWraps(t, &m, "at width 23")
	m.SetWidth(81)
	checkWraps(t, &m, "at width 81")
	for _, l := range func() []string { l, _ := m.viewLines(); return l }() {
		if w := ansi.StringWidth(l); w > 81 {
			t.Fatalf("row %q is %d cells, wider than the box", ansi.Strip(l), w)
		}
	}
}

func TestComposerCursorMoves(t *testing.T) {
	m := testComposer(12)
	m = typeText(m, "one two three four\nfive six")
	if m.row != 1 || m.col != 8 {
		t.Fatalf("cursor at %d:%d after typing, want 1:8", m.row, m.col)
	}
	// Up from "five six" goes to the last row of the line above ("four"),
	// at the same column or its end.
	m = press(m, "up")
	if m.row != 0 || string(m.lines[0][m.col-4:m.col]) != "four" {
		t.Fatalf("up: cursor at %d:%d, want after \"four\"", m.row, m.col)
	}
	m = press(m, "up", "home")
	if m.col != 0 {
		t.Fatalf("home: col %d", m.col)
	}
	m = press(m, "end", "alt+left")
	if got := string(m.lines[0][m.col:]); got != "four" {
		t.Fatalf("alt+left from the end leaves %q after the cursor, want \"four\"", got)
	}
	m = press(m, "ctrl+k")
	if m.Value() != "one two three \nfive six" {
		t.Fatalf("ctrl+k: %q", m.Value())
	}
	m = press(m, "down", "home", "backspace")
	if m.Value() != "one two three five six" || m.row != 0 || m.col != len("one two three ") {
		t.Fatalf("backspace at a line's start joins the lines: %q, cursor %d:%d", m.Value(), m.row, m.col)
	}
	m = press(m, "ctrl+u")
	if m.Value() != "five six" || m.col != 0 {
		t.Fatalf("ctrl+u: %q at %d", m.Value(), m.col)
	}
	m = press(m, "right", "right", "right", "right", "alt+d")
	if m.Value() != "five" {
		t.Fatalf("alt+d: %q", m.Value())
	}
}

func TestComposerPasteKeepsLines(t *testing.T) {
	m := testComposer(40)
	m, _ = m.Update(tea.PasteMsg{Content: "first\r\nsecond\tcol\x1b[31m\rthird"})
	if got, want := m.Value(), "first\nsecond    col[31m\nthird"; got != want {
		t.Fatalf("pasted %q, want %q (CRLF and CR end lines, a tab is spaces, control characters go)", got, want)
	}
	if m.Height() != 3 {
		t.Fatalf("height %d, want 3", m.Height())
	}
	m.SetValue("")
	if m.Height() != 1 || m.Value() != "" {
		t.Fatalf("after SetValue(\"\"): height %d, value %q", m.Height(), m.Value())
	}
}

// Typing at the end of a long line wraps again only its last rows: the work
// per key does not grow with the text (bubbles' textarea wrapped the whole
// line on every key, in Update and in View: 2,000 keys took ~10 s).
func TestComposerTypingWrapsOnlyTheEnd(t *testing.T) {
	m := testComposer(42) // 40 cells of text
	var work int
	m.wrapped = &work
	const n = 4000
	m = typeText(m, strings.Repeat("word ", n/5))
	_, _ = m.viewLines()
	// Each key wraps at most from the start of the row before the cursor's:
	// two rows of 40, whatever the length.
	if perKey := work / n; perKey > 2*40 {
		t.Fatalf("wrapping looked at %d runes for %d keys (%d a key): more than two rows a key", work, n, perKey)
	}
	checkWraps(t, &m, "after typing")
}
