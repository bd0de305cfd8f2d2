package mdterm

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"

	"github.com/chatterm/chat/internal/termtext"
)

// span is a run of text in one style, linking to href when that is set.
type span struct {
	text  string
	style Style
	href  string
}

// inline collects a paragraph's text as lines of spans.
type inline struct {
	r    *renderer
	done [][]span
	cur  []span
}

func (in *inline) add(t string, style Style, href string) {
	if t != "" {
		in.cur = append(in.cur, span{text: t, style: style, href: href})
	}
}

func (in *inline) newline() {
	in.done = append(in.done, in.cur)
	in.cur = nil
}

func (in *inline) lines() [][]span {
	if len(in.cur) > 0 || len(in.done) == 0 {
		in.newline()
	}
	return in.done
}

// walk adds n's inline children in style, linked to href.
func (in *inline) walk(n ast.Node, style Style, href string) {
	src := in.r.src
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if !c.IsRaw() {
				v = util.UnescapePunctuations(v)
			}
			in.add(clean(string(v)), style, href)
			if c.SoftLineBreak() || c.HardLineBreak() {
				in.newline()
			}
		case *ast.String:
			in.add(clean(string(c.Value)), style, href)
		case *ast.CodeSpan:
			in.walk(c, style|Code, href)
		case *ast.Emphasis:
			if c.Level >= 2 {
				in.walk(c, style|Bold, href)
			} else {
				in.walk(c, style|Italic, href)
			}
		case *east.Strikethrough:
			in.walk(c, style|Strike, href)
		case *ast.Link:
			in.link(c, string(c.Destination), style)
		case *ast.Image:
			in.add("[image: ", style, "")
			in.link(c, string(c.Destination), style)
			in.add("]", style, "")
		case *ast.AutoLink:
			dest := string(c.URL(src))
			in.add(clean(string(c.Label(src))), style|Link, safeURL(dest))
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				in.add(clean(string(seg.Value(src))), style, href)
			}
		default:
			in.walk(c, style, href)
		}
	}
}

// link adds a link's text, linked to dest when that is an address a terminal
// may open, and dest beside it when the text says something else: text that
// reads "bank.example" must not hide where the link goes.
func (in *inline) link(n ast.Node, dest string, style Style) {
	dest = clean(dest)
	href := safeURL(dest)
	start := len(in.done)
	before := len(in.cur)
	in.walk(n, style|Link, href)
	var label strings.Builder
	if len(in.done) == start {
		for _, s := range in.cur[before:] {
			label.WriteString(s.text)
		}
	}
	if dest != "" && label.String() != dest && strings.TrimPrefix(dest, "mailto:") != label.String() {
		in.add(" ("+dest+")", style&^(Bold|Italic)|URL, href)
	}
}

// clean is the sanitiser again, after Markdown's unescaping: a character
// reference or an escape cannot bring back what Render's first pass took out.
func clean(s string) string { return termtext.Clean(s, false) }

// maxURL is the longest address written as a hyperlink.
const maxURL = 2048

// safeURL is dest when a terminal may be asked to open it: http, https or
// mailto, printable ASCII only (no space, nothing a terminal reads as the
// end of the sequence), at most maxURL bytes; else "" (shown, not linked).
func safeURL(dest string) string {
	lower := strings.ToLower(dest)
	if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "mailto:") {
		return ""
	}
	if len(dest) > maxURL {
		return ""
	}
	for i := 0; i < len(dest); i++ {
		if c := dest[i]; c <= ' ' || c >= 0x7f {
			return ""
		}
	}
	return dest
}
