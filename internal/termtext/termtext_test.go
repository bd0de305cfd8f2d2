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
		{"accents kept", "Việt ễ", "Việt ễ", false},
		{"zalgo capped", "z" + strings.Repeat("\u0301", 6000) + "a", "z" + strings.Repeat("\u0301", MaxMarks) + "a", false},
		{"zalgo through joiners", "z" + strings.Repeat("\u0301\u200d", 10), "z" + strings.Repeat("\u0301\u200d", MaxMarks) + strings.Repeat("\u200d", 10-MaxMarks), false},
		{"zalgo through dropped", "z" + strings.Repeat("\u0301\u202e", 10), "z" + strings.Repeat("\u0301", MaxMarks), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in, tc.multiline); got != tc.out {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.out)
			}
		})
	}
}

func TestBlank(t *testing.T) {
	for _, s := range []string{"", " ", "\u3164", "\u3164\u3164", "\u115f\u1160", "\uffa0", "\u200b", "\u200d\u200c", "\u2800", "\u3000\u00a0", "\u0301\u0302", "\ufe0f", "\u202e \u2066"} {
		if !Blank(s) {
			t.Errorf("Blank(%q) = false", s)
		}
	}
	for _, s := range []string{"a", "\u3164a", "👍", "世", ".", "\u05d0", "👩‍💻"} {
		if Blank(s) {
			t.Errorf("Blank(%q) = true", s)
		}
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"report.pdf", "report.pdf"},
		{"invoice\u202efdp.sh", "invoicefdp.sh"},
		{"a\u200bb\u200d.txt", "ab.txt"},
		{"../../etc/passwd", "_.._etc_passwd"},
		{`..\..\win.ini`, `_.._win.ini`},
		{".bashrc", "bashrc"},
		{"-rf", "rf"},
		{" - .x", "x"},
		{"name. ", "name"},
		{"C:evil", "C_evil"},
		{"\u3164", "attachment"},
		{"...", "attachment"},
		{"", "attachment"},
		{"e" + strings.Repeat("\u0301", 50) + ".txt", "e" + strings.Repeat("\u0301", MaxMarks) + ".txt"},
		{"photo\x1b[2J.png", "photo[2J.png"},
	} {
		if got := FileName(tc.in); got != tc.out {
			t.Errorf("FileName(%q) = %q, want %q", tc.in, got, tc.out)
		}
	}
	if got := FileName(strings.Repeat("é", 200)); len(got) > 255 || !utf8.ValidString(got) {
		t.Errorf("a long name: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestNameKey(t *testing.T) {
	key := NameKey("alice")
	for _, s := range []string{"Alice", "alice ", " ALICE", "\u0430lice", "al\u0456ce"} {
		if NameKey(s) != key {
			t.Errorf("NameKey(%q) = %q, want alice's %q", s, NameKey(s), key)
		}
	}
	for _, s := range []string{"alicia", "bob", "al ice"} {
		if NameKey(s) == key {
			t.Errorf("NameKey(%q) is alice's", s)
		}
	}
	if NameKey("Ann  Lee") != NameKey("ann lee") {
		t.Error("runs of spaces make another key")
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
		if n := longestMarks(out); n > MaxMarks {
			t.Fatalf("Clean(%q) = %q keeps %d combining marks in a row", s, out, n)
		}
	})
}

// longestMarks is the longest run of combining marks in s, the joiners
// (which are no base) not ending a run.
func longestMarks(s string) int {
	longest, n := 0, 0
	for _, r := range s {
		switch {
		case isMark(r):
			n++
			longest = max(longest, n)
		case r != '\u200c' && r != '\u200d':
			n = 0
		}
	}
	return longest
}

func FuzzFileName(f *testing.F) {
	for _, s := range []string{"a.txt", "invoice\u202efdp.sh", "../x", ".env", "-x", "\u3164", "z\u0301\u0301\u0301\u0301\u0301\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := FileName(s)
		if out == "" || len(out) > 255 || !utf8.ValidString(out) || strings.ContainsAny(out, "/\\:") ||
			strings.HasPrefix(out, ".") || strings.HasPrefix(out, "-") || Blank(out) {
			t.Fatalf("FileName(%q) = %q", s, out)
		}
		for _, r := range out {
			if dropped(r) || r == '\u200c' || r == '\u200d' {
				t.Fatalf("FileName(%q) = %q keeps %U", s, out, r)
			}
		}
		if longestMarks(out) > MaxMarks {
			t.Fatalf("FileName(%q) = %q keeps a run of marks", s, out)
		}
		if FileName(out) != out {
			t.Fatalf("FileName is not idempotent on %q: %q then %q", s, out, FileName(out))
		}
	})
}
