package localstore

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// snippetTokens is how many words a snippet shows, as SQLite's snippet()
// was asked for before Search drew its snippets itself.
const snippetTokens = 12

// snippet is text cut to the snippetTokens words around the most matches of
// terms (folded prefixes, as matchExpr asks the index), each matched word
// between SnippetStart and SnippetEnd, "…" where text was cut. It is drawn
// here, for the few hits shown, because the index's snippet() costs a second
// full-text query over every hit (Search says why).
func snippet(text string, terms []string) string {
	type span struct {
		start, end int
		match      bool
	}
	var words []span
	inWord := false
	for i, r := range text {
		w := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) && inWord
		switch {
		case w && !inWord:
			words = append(words, span{start: i})
		case !w && inWord:
			words[len(words)-1].end = i
		}
		inWord = w
	}
	if inWord {
		words[len(words)-1].end = len(text)
	}
	for i := range words {
		f := fold(text[words[i].start:words[i].end])
		for _, t := range terms {
			if strings.HasPrefix(f, t) {
				words[i].match = true
				break
			}
		}
	}
	// The window with the most matched words, the first such.
	from, best := 0, -1
	for s := 0; s+snippetTokens <= len(words) || s == 0; s++ {
		n := 0
		for _, w := range words[s:min(s+snippetTokens, len(words))] {
			if w.match {
				n++
			}
		}
		if n > best {
			from, best = s, n
		}
		if s+snippetTokens >= len(words) {
			break
		}
	}
	to := min(from+snippetTokens, len(words))
	var b strings.Builder
	pos := 0
	if from > 0 {
		b.WriteString("…")
		pos = words[from].start
	}
	for _, w := range words[from:to] {
		b.WriteString(text[pos:w.start])
		if w.match {
			b.WriteString(SnippetStart + text[w.start:w.end] + SnippetEnd)
		} else {
			b.WriteString(text[w.start:w.end])
		}
		pos = w.end
	}
	if to < len(words) {
		b.WriteString("…")
	} else {
		b.WriteString(text[pos:])
	}
	return b.String()
}

// fold is a word as the index keeps it (unicode61, remove_diacritics=2):
// lower case, accents dropped.
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
