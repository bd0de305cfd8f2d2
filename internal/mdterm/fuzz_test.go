package mdterm

import (
	"slices"
	"strings"
	"testing"

	"github.com/chatterm/chat/internal/termtext"
)

func FuzzRender(f *testing.F) {
	for _, s := range []string{"hello", "**b** *i* `c`", "> q\n- a\n1. b", "```\ncode\n```", "[l](https://x.example) https://y.example",
		"\x1b[31m", "&#27;", "日本語 **太字**", strings.Repeat("*", 100), "a\n\n\nb", "    indented"} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, src string, w int) {
		w = 2 + abs(w)%200
		checkSafe(t, src, Render(src, Options{Width: w}), w, false)
		checkSafe(t, src, Render(src, Options{Width: w, Paint: ANSI}), w, true)
	})
}

// FuzzPlainPath checks that text taking Render's fast path draws as the
// parser would have drawn it.
func FuzzPlainPath(f *testing.F) {
	for _, s := range []string{"hello world", "two\nlines", "x.y, z", "a  b", "1st", "é ü 日本"} {
		f.Add(s, 10)
	}
	for _, s := range plainChat {
		f.Add(s, 17)
	}
	for _, s := range notPlain {
		f.Add(s, 17)
	}
	f.Fuzz(func(t *testing.T, src string, w int) {
		w = 2 + abs(w)%100
		src = termtext.Clean(src, true)
		if !plainText(src) {
			return
		}
		fast, parsed := renderPlain(src, Options{Width: w}), renderParsed(src, Options{Width: w})
		if !slices.Equal(fast, parsed) {
			t.Fatalf("%q at %d: fast %q, parsed %q", src, w, fast, parsed)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzPlainLine checks that text plainText lets through draws the same
// lines by renderPlainText's whole lines as by wrapping them into words,
// painted and not.
func FuzzPlainLine(f *testing.F) {
	for _, s := range []string{"hello world", "two\nlines", "a  b", "é ü 日本", "x" + strings.Repeat(" y", 40)} {
		f.Add(s, 10)
	}
	for _, s := range plainChat {
		f.Add(s, 17)
		f.Add(s, 200)
	}
	f.Fuzz(func(t *testing.T, src string, w int) {
		w = abs(w) % 120
		src = termtext.Clean(src, true)
		if !plainText(src) {
			return
		}
		for _, paint := range []Painter{nil, ANSI, tagPaint} {
			fast, wrapped := renderPlainText(src, Options{Width: w, Paint: paint}), renderPlain(src, Options{Width: w, Paint: paint})
			if !slices.Equal(fast, wrapped) {
				t.Fatalf("%q at %d: whole lines %q, wrapped %q", src, w, fast, wrapped)
			}
		}
	})
}

// tagPaint marks every run with its style, so a run split or joined
// differently shows.
func tagPaint(text string, s Style) string { return "<" + string(rune('0'+s)) + ">" + text + "</>" }
