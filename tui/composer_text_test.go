package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// 2,000 keys typed into an open chat, each through the root model's Update
// and View as the program runs them, build the composer's text a bounded
// number of times, not once a key: the chat's typing check and the size
// shown near the limit asked for the whole text after every key (two million
// runes for 2,000 keys).
func TestTypingDoesNotBuildTheTextPerKey(t *testing.T) {
	tm := typingModel(t)
	m := tm.(Model)
	var built int
	m.chat.compose.built = &built
	tm = m
	const text = "the quick brown fox jumps over the lazy dog, and then some more words follow it "
	const n = 2000
	for i := range n {
		r := rune(text[i%len(text)])
		tm, _ = tm.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		_ = tm.View()
	}
	m = tm.(Model)
	if got := m.chat.compose.Len(); got != n {
		t.Fatalf("Len after %d keys = %d", n, got)
	}
	if built > 2*n {
		t.Fatalf("building the text wrote %d runes for %d keys: it is built on every key", built, n)
	}
}

// Len is len(Value()) through every kind of edit: multi-byte runes, new
// lines, pastes, deletes within and across lines, word deletes, kills.
func TestComposerLenFollowsEdits(t *testing.T) {
	m := testComposer(30)
	rng := rand.New(rand.NewPCG(7, 28))
	pieces := []string{"a", "é", "日本", "👍", "word ", "\n", "two\nlines", "tab\there"}
	keys := []string{"backspace", "delete", "ctrl+w", "alt+d", "ctrl+k", "left", "right", "up", "down",
		"home", "end", "ctrl+home", "ctrl+end", "alt+b", "alt+f"}
	for i := range 3000 {
		switch op := rng.IntN(10); {
		case op < 5:
			m = typeText(m, pieces[rng.IntN(len(pieces))])
		case op < 6:
			m.insert(pieces[rng.IntN(len(pieces))]) // a paste
		default:
			m = press(m, keys[rng.IntN(len(keys))])
		}
		if got, want := m.Len(), len(m.Value()); got != want {
			t.Fatalf("step %d: Len %d, len(Value()) %d (%q)", i, got, want, m.Value())
		}
		if m.Empty() != (m.Value() == "") {
			t.Fatalf("step %d: Empty %v with Value %q", i, m.Empty(), m.Value())
		}
	}
	m.SetValue(strings.Repeat("ü", 100))
	if m.Len() != 200 {
		t.Fatalf("Len after SetValue = %d, want 200", m.Len())
	}
	m.Reset()
	if m.Len() != 0 || !m.Empty() {
		t.Fatalf("after Reset: Len %d, Empty %v", m.Len(), m.Empty())
	}
}
