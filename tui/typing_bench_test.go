package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkType2000 is issue 28's paste without bracketed paste: 2,000
// characters arriving as keystrokes in an open chat's composer, each through
// the root model's Update and View as the program runs them. Reported per
// 2,000 keys: it was quadratic (the textarea wrapped the whole line again on
// every key, in Update and in View).
func BenchmarkType2000(b *testing.B) {
	const text = "the quick brown fox jumps over the lazy dog, and then some more words follow it "
	for b.Loop() {
		tm := typingModel(b)
		for i := range 2000 {
			r := rune(text[i%len(text)])
			tm, _ = tm.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			_ = tm.View()
		}
	}
}

// typingModel is the root model at 100×40 with bob's chat open and its
// composer focused.
func typingModel(tb testing.TB) tea.Model {
	tb.Helper()
	be := fixture()
	var tm tea.Model = New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC})
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	tm, _ = tm.Update(openConversationMsg{entry: be.inbox[0]})
	if m := tm.(Model); !m.chat.composing {
		tb.Fatal("the composer does not have focus after opening a chat")
	}
	return tm
}
