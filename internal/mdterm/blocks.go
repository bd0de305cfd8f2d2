package mdterm

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// renderer draws one message.
type renderer struct {
	src   []byte
	width int
	paint Painter
	out   []string
	// levels are the prefixes of the blocks being drawn, outermost first: a
	// quote's bar, a list item's bullet and then its indent.
	levels []level
	// prefixW is the width of the prefixes in levels.
	prefixW int
}

// level is one block's prefix: first on its first line, rest on the others
// (a bullet, then spaces as wide).
type level struct {
	first, rest span
	used        bool // the first line is drawn: rest from now on
	skipped     bool // too deep to indent further: drawn with no prefix
}

// maxIndent is how much of the width prefixes may take: a quote nested a
// thousand deep draws its text at half the width, not in no room at all.
func (r *renderer) maxIndent() int { return r.width / 2 }

func (r *renderer) push(first, rest span) {
	l := level{first: first, rest: rest}
	w := cells(first.text)
	if r.prefixW+w > r.maxIndent() {
		l.skipped = true
	} else {
		r.prefixW += w
	}
	r.levels = append(r.levels, l)
}

func (r *renderer) pop() {
	l := r.levels[len(r.levels)-1]
	if !l.skipped {
		r.prefixW -= cells(l.first.text)
	}
	r.levels = r.levels[:len(r.levels)-1]
}

// prefix is the prefix of the next line; taking it uses each level's first.
func (r *renderer) prefix() []span {
	var p []span
	for i := range r.levels {
		l := &r.levels[i]
		if l.skipped {
			continue
		}
		if l.used {
			p = append(p, l.rest)
		} else {
			p = append(p, l.first)
		}
		l.used = true
	}
	return p
}

// emit adds lines drawn to the room left by the prefixes, each with the prefix.
func (r *renderer) emit(lines [][]span) {
	for _, l := range lines {
		if len(r.levels) == 0 {
			r.out = append(r.out, r.draw(l))
			continue
		}
		r.out = append(r.out, r.draw(append(r.prefix(), l...)))
	}
}

// blank adds an empty line between blocks: the prefix alone, its trailing
// spaces dropped (a quote's bar stays, a list's indent does not).
func (r *renderer) blank() {
	p := r.prefix()
	for len(p) > 0 {
		t := strings.TrimRight(p[len(p)-1].text, " ")
		if t != "" {
			p[len(p)-1].text = t
			break
		}
		p = p[:len(p)-1]
	}
	r.out = append(r.out, r.draw(p))
}

// room is the width the text of a line may take.
func (r *renderer) room() int { return r.width - r.prefixW }

// blocks draws the block children of n.
func (r *renderer) blocks(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c != n.FirstChild() && c.HasBlankPreviousLines() {
			r.blank()
		}
		r.block(c)
	}
}

func (r *renderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.paragraph(n, 0)
	case *ast.Heading:
		r.paragraph(n, Bold)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		r.push(span{text: "  "}, span{text: "  "})
		r.code(n)
		r.pop()
	case *ast.HTMLBlock:
		r.verbatim(n, 0)
	case *ast.Blockquote:
		bar := span{text: "│ ", style: Quote}
		r.push(bar, bar)
		r.blocks(n)
		r.pop()
	case *ast.List:
		r.list(n)
	case *ast.ThematicBreak:
		r.emit([][]span{{{text: strings.Repeat("─", min(r.room(), 20)), style: Marker}}})
	default:
		if n.HasChildren() {
			r.blocks(n)
		} else {
			r.verbatim(n, 0)
		}
	}
}

// paragraph draws text, each of its line breaks kept: in a chat a new line
// is meant as one (as Slack and Element draw it), not joined to the last.
func (r *renderer) paragraph(n ast.Node, style Style) {
	var in inline
	in.r = r
	in.walk(n, style, "")
	for _, l := range in.lines() {
		r.emit(r.wrap(l, r.room()))
	}
}

func (r *renderer) list(n *ast.List) {
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		if item != n.FirstChild() && item.HasBlankPreviousLines() {
			r.blank()
		}
		mark := "• "
		if n.IsOrdered() {
			mark = strconv.Itoa(num) + string(n.Marker) + " "
			num++
		}
		r.push(span{text: mark, style: Marker}, span{text: strings.Repeat(" ", cells(mark))})
		if item.HasChildren() {
			r.blocks(item)
		} else {
			r.emit([][]span{nil}) // an empty item still shows its bullet
		}
		r.pop()
	}
}

// code draws a code block's lines as written: never re-flowed, and a line
// wider than the room is cut into pieces, each but the last ending in ↩.
func (r *renderer) code(n ast.Node) {
	r.verbatim(n, Code)
}

func (r *renderer) verbatim(n ast.Node, style Style) {
	lines := n.Lines()
	if lines == nil {
		return
	}
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		l := clean(strings.TrimRight(string(seg.Value(r.src)), "\r\n"))
		r.emit(r.cut(span{text: l, style: style}, r.room()))
	}
}
