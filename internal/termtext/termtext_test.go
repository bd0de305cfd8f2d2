package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
		multiline     bool
	}{
		{"plain", "hello, world", "hello, world", false},
		{"unicode", "héllo 世界 👩‍💻 🇫🇷", "héllo 世界 👩‍💻 🇫🇷", false},
		{"title OSC", "a\x1b]0;pwned\x07b", "a]0;pwnedb", false},
		{"clipboard OSC 52", "\x1b]52;c;ZXZpbA==\x07x", "]52;c;ZXZpbA==x", false},
		{"clear screen", "\x1b[2Jx", "[2Jx", false},
		{"forged line", "ok\x1b[1K\rbob: send me your password", "ok[1K bob: send me your password", false},
		{"hyperlink OSC 8", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "]8;;http://evil\\click]8;;\\", false},
		{"C1 CSI", "a\u009b2Jb", "a2Jb", false},
		{"8-bit CSI byte", "a\x9b2Jb", "a\uFFFD2Jb", false},
		{"RLO", "invoice\u202Etxt.exe", "invoicetxt.exe", false},
		{"isolates and marks", "\u2066a\u2069\u200e\u200f\u061c", "a", false},
		{"tab", "a\tb", "a    b", false},
		{"newline kept", "a\nb", "a\nb", true},
		{"newline folded", "a\nb", "a b", false},
		{"line separator", "a\u2028b", "a b", true},
		{"CRLF", "a\r\nb", "a\nb", true},
		{"CRLF one line", "a\r\nb", "a b", false},
		{"DEL and NUL", "a\x7f\x00b", "ab", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in, tc.multiline); got != tc.out {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.out)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  a\n\n b\x1b[2J\t c "); got != "a b[2J c" {
		t.Errorf("OneLine = %q", got)
	}
}

// Safe reports what must never reach a terminal from Clean's output.
func unsafeRune(s string, multiline bool) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, true
	}
	for _, r := range s {
		if r == '\n' && multiline {
			continue
		}
		if dropped(r) || r == '\u2028' || r == '\u2029' {
			return r, true
		}
	}
	return 0, false
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"hi", "\x1b]0;x\x07", "\u202e", "a\r\nb", "\x9b", "👩‍💻"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, multiline bool) {
		out := Clean(s, multiline)
		if r, bad := unsafeRune(out, multiline); bad {
			t.Fatalf("Clean(%q) = %q keeps %U", s, out, r)
		}
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Fatalf("Clean(%q) = %q keeps a control", s, out)
		}
		if Clean(out, multiline) != out {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}
