package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// wrapText wraps a paragraph of message text to w cells. A web address is
// never broken at a hyphen or a slash the way words are: it is kept whole on
// a line of its own when it fits, cut into w-wide pieces when it does not,
// and every piece links to the whole address (OSC 8, written here, by the
// client: never taken from message text, which the sanitiser strips of
// escapes), so it opens from any of its lines.
func wrapText(para string, w int) []string {
	if !strings.Contains(para, "://") {
		return strings.Split(ansi.Wrap(para, w, ""), "\n")
	}
	var lines []string
	var line strings.Builder
	lineW := 0
	flush := func() {
		lines = append(lines, line.String())
		line.Reset()
		lineW = 0
	}
	for _, word := range strings.Fields(para) {
		url := linkTarget(word)
		ww := ansi.StringWidth(word)
		if url == "" && ww > w { // a long word that is no address: as ansi.Wrap would
			for _, piece := range strings.Split(ansi.Wrap(word, w, ""), "\n") {
				if lineW > 0 {
					flush()
				}
				line.WriteString(piece)
				lineW = ansi.StringWidth(piece)
			}
			continue
		}
		if lineW > 0 && lineW+1+ww > w {
			flush()
		}
		if lineW > 0 {
			line.WriteByte(' ')
			lineW++
		}
		if url == "" {
			line.WriteString(word)
			lineW += ww
			continue
		}
		for rest := word; rest != ""; {
			piece := ansi.Cut(rest, 0, w-lineW)
			rest = rest[len(piece):]
			line.WriteString(ansi.SetHyperlink(url) + piece + ansi.ResetHyperlink())
			lineW += ansi.StringWidth(piece)
			if rest != "" {
				flush()
			}
		}
	}
	if lineW > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// linkTarget is the address a word is, "" when it is none: http or https, and
// only the characters an address may hold, so nothing a terminal reads as a
// control can be in what the link carries.
func linkTarget(word string) string {
	word = strings.TrimRight(word, ".,;:!?)]}'\"") // sentence punctuation after it
	if !strings.HasPrefix(word, "https://") && !strings.HasPrefix(word, "http://") {
		return ""
	}
	for i := 0; i < len(word); i++ {
		if c := word[i]; c <= ' ' || c >= 0x7f {
			return ""
		}
	}
	if len(word) > 2048 {
		return ""
	}
	return word
}
