package mdterm

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// Inputs are at most 16 KiB, the server's default limit on a message.

// checkSafe fails when a line is wider than w or carries anything a terminal
// acts on that the renderer did not write: with no painter no escape at all;
// with ANSI only SGR and OSC 8 to safe addresses.
func checkSafe(t testing.TB, src string, lines []string, w int, painted bool) {
	t.Helper()
	for _, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Fatalf("%q: line %q is %d cells, over %d", src, l, lw, w)
		}
		if strings.Contains(l, "\n") {
			t.Fatalf("%q: line %q holds a newline", src, l)
		}
		rest := l
		if painted {
			rest = stripOurs(t, src, l)
		}
		for _, r := range rest {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("%q: line %q carries control %U", src, l, r)
			}
		}
	}
}

// stripOurs takes out the sequences the renderer writes, checking each: SGR,
// and OSC 8 whose target safeURL passes.
func stripOurs(t testing.TB, src, l string) string {
	t.Helper()
	var b strings.Builder
	p := ansi.GetParser()
	defer ansi.PutParser(p)
	var state byte
	for len(l) > 0 {
		seq, width, n, newState := ansi.DecodeSequence(l, state, p)
		state = newState
		switch {
		case width > 0 || !strings.HasPrefix(seq, "\x1b"):
			b.WriteString(seq)
		case strings.HasPrefix(seq, "\x1b]8;;"):
			target := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(seq, "\x1b]8;;"), "\a"), "\x1b\\")
			if target != "" && safeURL(target) != target {
				t.Fatalf("%q: hyperlink to %q", src, target)
			}
		case strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "m"):
		default:
			t.Fatalf("%q: line %q carries sequence %q", src, l, seq)
		}
		l = l[n:]
	}
	return b.String()
}

func TestHostile(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"escape sequences", "\x1b[2J\x1b]0;title\a red \x1b[31mtext\x9b31m"},
		{"OSC 8 in a link target", "[click](https://a.example/\x1b]8;;https://evil.example\a)"},
		{"BEL and ST in a link target", "[x](https://a.example/\a\x1b\\) <https://b.example/\x07>"},
		{"character references", "&#27;[31m &#x1b; &#155; &#x9b;31m"},
		{"escaped control", "\\\x1b[31m"},
		{"bidi override", "**\u202egpj.exe**"},
		{"control in code", "```\n\x1b[31m\x00\r\n```\n`\x1b]52;c;aGk=\a`"},
		{"a link target that is no address", "[a](\x1b[31m) [b](javascript:x) [c](file:///etc/passwd)"},
		{"16 KiB of stars", strings.Repeat("*", 16<<10)},
		{"16 KiB of underscores and stars", strings.Repeat("_*", 8<<10)},
		{"deep quotes", strings.Repeat(">", 16<<10) + " x"},
		{"deep lists", strings.Repeat("- ", 8000) + "x"},
		{"deep nested list lines", func() string {
			var b strings.Builder
			for i := range 120 { // 16 KiB, the server's limit on a message
				b.WriteString(strings.Repeat("  ", i) + "- x\n")
			}
			return b.String()
		}()},
		{"deep emphasis", strings.Repeat("*a ", 2700) + strings.Repeat(" a*", 2700)},
		{"deep links", strings.Repeat("[", 8000) + "x" + strings.Repeat("](https://a.example)", 400)},
		{"backticks", strings.Repeat("`", 16<<10)},
		{"long word", strings.Repeat("w", 16<<10)},
		{"zalgo", "a" + strings.Repeat("\u0301", 8000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, w := range []int{2, 7, 40, 120} {
				start := time.Now()
				checkSafe(t, c.src, Render(c.src, Options{Width: w}), w, false)
				checkSafe(t, c.src, Render(c.src, Options{Width: w, Paint: ANSI}), w, true)
				// A generous bound, for a quadratic blow-up only (a
				// message is drawn once per width, on a shared machine).
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("width %d took %v", w, d)
				}
			}
		})
	}
}

func TestHostileLinkTargetIsNotLinked(t *testing.T) {
	got := strings.Join(Render("[x](https://a.example/\x1b]8;;https://evil.example\a)", Options{Width: 200, Paint: ANSI}), "\n")
	if strings.Contains(got, "\x1b]8;;https://evil") {
		t.Errorf("the target's own OSC 8 came through: %q", got)
	}
}
