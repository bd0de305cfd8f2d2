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
//   - Combining marks past MaxMarks in a row: dropped, so one letter carrying
//     thousands of them cannot paint over the lines around it.
func Clean(s string, multiline bool) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	marks := 0 // combining marks written since the last base character
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if isMark(r) {
			if marks < MaxMarks {
				b.WriteRune(r)
			}
			marks++
			continue
		}
		if !dropped(r) && r != '\u200c' && r != '\u200d' {
			// The joiners carry no base: marks after one stack on the
			// letter before it.
			marks = 0
		}
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
	marks := 0
	for _, r := range s {
		if r == '\u2028' || r == '\u2029' || r == '\t' || dropped(r) {
			return false
		}
		switch {
		case isMark(r):
			if marks++; marks > MaxMarks {
				return false
			}
		case r != '\u200c' && r != '\u200d':
			marks = 0
		}
	}
	return true
}

// MaxMarks is the most combining marks Clean keeps on one character. Writing
// needs few (Vietnamese stacks two, pointed Hebrew three); a "zalgo" letter
// with thousands is drawn by some terminals far above and below its line.
const MaxMarks = 4

func isMark(r rune) bool { return r >= 0x300 && unicode.Is(unicode.M, r) }

// Blank reports whether s shows nothing: it holds only white space, format
// characters (bidi controls, zero-width joiners), combining marks with no
// letter, default-ignorable characters that draw nothing (the Hangul fillers
// U+3164, U+115F, U+1160, U+FFA0, variation selectors) and the blank
// Braille pattern U+2800. Such a name, status or message would look empty,
// or like someone else's with the filler added (docs/security.md).
func Blank(s string) bool {
	for _, r := range s {
		if !invisible(r) {
			return false
		}
	}
	return true
}

func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.M, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r) ||
		r == '\u2800' || r == utf8.RuneError
}

// FileName makes a name from someone else safe to save a file under: what
// Clean drops, the zero-width joiners and every default-ignorable character
// go too (a name must read as what it is: "invoice\u202efdp.sh" is
// "invoicefdp.sh"), path separators and ':' become '_', combining marks are
// capped, and leading dots, dashes and spaces are trimmed (no hidden file, no
// name a command takes for an option), as are trailing dots and spaces. An
// empty result is "attachment". The server refuses an attachment name that
// FileName would change (wire.AttachmentInfo.Validate), and the clients
// apply it again before writing to disk.
func FileName(s string) string {
	var b strings.Builder
	marks := 0
	for _, r := range Clean(s, false) {
		switch {
		case isMark(r):
			if marks++; marks > MaxMarks {
				continue
			}
		case unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
			unicode.Is(unicode.Variation_Selector, r) || r == utf8.RuneError:
			continue
		case r == '/' || r == '\\' || r == ':':
			r, marks = '_', 0
		default:
			marks = 0
		}
		b.WriteRune(r)
	}
	name := strings.TrimLeft(b.String(), ". -\u00a0")
	for len(name) > maxFileName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	name = strings.TrimRight(name, ". \u00a0")
	if Blank(name) {
		return "attachment"
	}
	return name
}

// maxFileName is the longest name most file systems take, in bytes.
const maxFileName = 255

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

// NameKey is what two names that read alike have in common: the Unicode
// confusable skeleton (UTS #39, from Unicode's confusables.txt through
// github.com/mtibben/confusables; skeleton.go) of the name lower-cased, with
// runs of white space as one space and none at the ends. "alice", "Alice",
// "alice " and "аlice" (a Cyrillic а) have one key, so the server lets only
// one account hold it (docs/security.md).
func NameKey(s string) string {
	return skeleton(strings.ToLower(strings.Join(strings.Fields(s), " ")))
}
