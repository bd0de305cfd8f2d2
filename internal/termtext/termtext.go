// Package termtext makes text from other people safe to print on a terminal.
// It is the one sanitiser of the project: the TUI and every `chat` command pass
// message bodies, names, statuses and server error text through it before they
// reach the screen (docs/security.md). JSON output does not use it: JSON escapes
// control characters itself and must stay exact.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s with everything removed that a terminal could act on:
//
//   - C0 controls (ESC, BEL, CR, ...), DEL and C1 controls (U+0080–U+009F, which
//     some terminals take as 8-bit CSI/OSC): dropped, so no escape sequence,
//     title change, clipboard write, hyperlink or carriage-return overwrite
//     survives. A tab becomes four spaces; a newline (or CRLF) is kept when
//     multiline, else it becomes a space, as do a lone CR and U+2028/U+2029.
//   - Bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) and
//     other invisible format characters: dropped, so text cannot be shown in an
//     order other than it was written (a right-to-left override making
//     "exe.txt" read as "txt.exe"). The zero-width (non-)joiners U+200C and
//     U+200D are kept: emoji sequences and several scripts need them.
//   - Invalid UTF-8: each bad byte becomes U+FFFD (a stray 0x9b is an 8-bit CSI
//     to some terminals).
func Clean(s string, multiline bool) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' && multiline:
			b.WriteByte('\n')
		case r == '\r' && i < len(s) && s[i] == '\n':
			// CRLF is one line end
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			// A lone CR would move the cursor back over what was printed.
			b.WriteByte(' ')
		case r == '\t':
			b.WriteString("    ")
		case dropped(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// OneLine is Clean for a single line: runs of white space (newlines included)
// fold to one space and the ends are trimmed.
func OneLine(s string) string {
	return strings.Join(strings.Fields(Clean(s, false)), " ")
}

// isClean is the fast path: most text has nothing to remove.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= utf8.RuneSelf {
			return isCleanSlow(s[i:])
		}
	}
	return true
}

func isCleanSlow(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\u2028' || r == '\u2029' || r == '\t' || dropped(r) {
			return false
		}
	}
	return true
}

// dropped: controls, format characters (bidi controls among them) except the
// joiners, and anything else unprintable that is not a combining mark or a
// space (Go's IsPrint leaves out spaces other than U+0020, which are harmless).
func dropped(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == '\u200c' || r == '\u200d':
		return false
	case unicode.Is(unicode.Cf, r):
		return true
	case unicode.IsPrint(r) || unicode.IsSpace(r) || unicode.Is(unicode.M, r):
		return false
	}
	return true
}
