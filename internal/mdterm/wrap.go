package mdterm

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// cells is the width of text on a terminal (text has no escape sequences).
// Printable ASCII, most words, is one cell a byte: measuring it as Unicode
// was most of the time of drawing a plain message.
func cells(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// word is a run of text between spaces, possibly in several styles
// ("**bold**text"), with the spaces before it: pieces[gap:text] are the
// spaces, pieces[text:end] the word, in the one slice words returns.
type word struct {
	gap, text, end int
	gapW, w        int
}

// words splits a line's spans at spaces; spaces before the first word and
// after the last are dropped, as Markdown drops them. All the pieces are in
// one slice: a word of its own slices cost two allocations a word.
func words(spans []span) ([]word, []span) {
	n := 0
	for _, s := range spans {
		n += strings.Count(s.text, " ") + 1
	}
	pieces := make([]span, 0, 2*n)
	out := make([]word, 0, n)
	cur := word{}
	inGap := false
	for _, s := range spans {
		t := s.text
		for t != "" {
			i := strings.IndexByte(t, ' ')
			if i == 0 {
				j := len(t) - len(strings.TrimLeft(t, " "))
				if cur.end > cur.text && !inGap {
					out = append(out, cur)
					cur = word{gap: len(pieces)}
				}
				inGap = true
				pieces = append(pieces, span{text: t[:j], style: s.style, href: s.href})
				cur.gapW += j
				cur.text, cur.end = len(pieces), len(pieces)
				t = t[j:]
				continue
			}
			if i < 0 {
				i = len(t)
			}
			inGap = false
			pieces = append(pieces, span{text: t[:i], style: s.style, href: s.href})
			cur.end = len(pieces)
			cur.w += cells(t[:i])
			t = t[i:]
		}
	}
	if cur.end > cur.text {
		out = append(out, cur)
	}
	return out, pieces
}

// wrap fills lines of at most room cells with the words of spans, breaking
// only at spaces; a word wider than room (a long address) is cut. A line
// with no words is one empty line.
func (r *renderer) wrap(spans []span, room int) [][]span {
	ws, pieces := words(spans)
	if len(ws) == 0 {
		return [][]span{nil}
	}
	// A line is a range of pieces (no copy) until a cut word makes pieces
	// of its own; then it is a slice of its own (own).
	var lines [][]span
	var line []span
	from, to, own := 0, 0, false
	lineW := 0
	closeLine := func() {
		if !own {
			line = pieces[from:to:to]
		}
		lines = append(lines, line)
		line, lineW, own = nil, 0, false
	}
	for _, w := range ws {
		if lineW > 0 && lineW+w.gapW+w.w <= room {
			if own {
				line = append(line, pieces[w.gap:w.end]...)
			}
			to = w.end
			lineW += w.gapW + w.w
			continue
		}
		if lineW > 0 {
			closeLine()
		}
		if w.w <= room {
			from, to, lineW = w.text, w.end, w.w
			continue
		}
		// Too wide for any line: cut, each piece on a line of its own
		// but the last, which the next words may follow.
		own = true
		for _, p := range pieces[w.text:w.end] {
			for p.text != "" {
				head, rest := cutAt(p.text, room-lineW)
				if head == "" && lineW == 0 {
					// Not even one character fits in the room: it
					// is wider (a wide character in one cell).
					_, rest = cutAt(p.text, 2)
					head = "?"
				}
				if head != "" {
					line = append(line, span{text: head, style: p.style, href: p.href})
					lineW += cells(head)
				}
				p.text = rest
				if rest != "" {
					closeLine()
					own = true
				}
			}
		}
	}
	closeLine()
	return lines
}

// cut draws a verbatim line in pieces of at most room cells, each but the
// last ending in the ↩ marker.
func (r *renderer) cut(s span, room int) [][]span {
	if cells(s.text) <= room {
		return [][]span{{s}}
	}
	var lines [][]span
	t := s.text
	for t != "" {
		head, rest := cutAt(t, room-1)
		if head == "" {
			_, rest = cutAt(t, 2)
			head = "?"
		}
		if rest == "" {
			lines = append(lines, []span{{text: head, style: s.style}})
			break
		}
		lines = append(lines, []span{{text: head, style: s.style}, {text: "↩", style: Marker}})
		t = rest
	}
	return lines
}

// cutAt splits t after as many whole grapheme clusters as fit in w cells.
func cutAt(t string, w int) (head, rest string) {
	used, i := 0, 0
	state := -1
	for i < len(t) {
		cluster, _, width, st := uniseg.FirstGraphemeClusterInString(t[i:], state)
		width = cells(cluster)
		if used+width > w {
			break
		}
		used += width
		i += len(cluster)
		state = st
	}
	return t[:i], t[i:]
}

// draw writes a line's spans through the painter, each link's runs inside
// one OSC 8 hyperlink that ends on the line. Without a painter it is the
// plain text.
func (r *renderer) draw(spans []span) string {
	if len(spans) == 1 && r.paint == nil {
		return spans[0].text
	}
	var b strings.Builder
	n := 0
	for _, s := range spans {
		n += len(s.text)
	}
	b.Grow(n)
	if r.paint == nil {
		for _, s := range spans {
			b.WriteString(s.text)
		}
		return b.String()
	}
	open := ""
	for i := 0; i < len(spans); {
		s := spans[i]
		// Runs of one style and link are painted together.
		j := i + 1
		for j < len(spans) && spans[j].style == s.style && spans[j].href == s.href {
			j++
		}
		if s.href != open {
			if open != "" {
				b.WriteString(ansi.ResetHyperlink())
			}
			if s.href != "" {
				b.WriteString(ansi.SetHyperlink(s.href))
			}
			open = s.href
		}
		t := s.text
		if j > i+1 {
			var run strings.Builder
			for _, p := range spans[i:j] {
				run.WriteString(p.text)
			}
			t = run.String()
		}
		b.WriteString(r.paint(t, s.style))
		i = j
	}
	if open != "" {
		b.WriteString(ansi.ResetHyperlink())
	}
	return b.String()
}
