package localstore

import (
	"strings"

	"github.com/chatterm/chat/internal/searchwords"
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
	for _, w := range searchwords.Words(text) {
		words = append(words, span{start: w.Start, end: w.End, match: searchwords.Match(text[w.Start:w.End], terms)})
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
