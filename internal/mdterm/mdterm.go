// Package mdterm draws the Markdown subset of chat messages as terminal
// lines: inline code, fenced and indented code blocks, bold, italic,
// strikethrough, block quotes, lists and links. It parses with goldmark
// (CommonMark, with GFM strikethrough and bare-address links) and draws the
// tree itself, fitting every line to a width in cells.
//
// Message text is someone else's: it is passed through the sanitiser
// (internal/termtext) before it is parsed, and every piece of text is passed
// through it again after Markdown's own unescaping, so no escape sequence in
// a message reaches the terminal. The only escape sequences in the output are
// the ones a Painter writes and the OSC 8 hyperlinks written here, whose
// targets must be http, https or mailto addresses of printable ASCII.
package mdterm

import (
	"strings"
	"sync"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/chatterm/chat/internal/termtext"
)

// Style is what a run of text is: a set of flags a Painter turns into
// colours and attributes.
type Style uint16

const (
	Bold Style = 1 << iota
	Italic
	Strike
	Code   // inline code and code blocks
	Link   // a link's text
	URL    // a link's address, shown beside text that differs from it
	Quote  // the bar before quoted lines
	Marker // list bullets and numbers, rules, the mark of a cut code line
)

// Painter draws a run of text in a style, returning it with the escape
// sequences that style needs. It is given text of one line, never a newline,
// and every run of a line, plain ones too (style 0), so a screen that colours
// all text can colour them.
type Painter func(text string, s Style) string

// Options say how to draw.
type Options struct {
	// Width is the most cells a line may take; below 2 counts as 2 (a wide
	// character needs two).
	Width int
	// Paint draws styled runs; nil draws plain text with no escape sequence
	// at all (output to a file or a pipe), and no hyperlinks.
	Paint Painter
}

// Render draws src as lines of at most o.Width cells, with no newline in any.
// Empty text is no lines.
func Render(src string, o Options) []string {
	src = termtext.Clean(src, true)
	if plainText(src) {
		return renderPlainText(src, o) // plainline.go
	}
	if tooDeep(src) {
		return renderPlain(src, o)
	}
	return renderParsed(src, o)
}

// maxNesting bounds the bytes of block markers ('>', list bullets and
// numbers, spaces) a line may start with for the text to be parsed: the
// parser's time grows with the square of the nesting (a 16 KiB message of
// nested lists took 0.65 s to parse), and no one writes a quote in a list
// in a quote a hundred deep. Deeper text is drawn as it is written.
const maxNesting = 100

func tooDeep(src string) bool {
	n := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\n':
			n = 0
		case n < 0:
		case c == '>' || c == ' ' || c == '-' || c == '*' || c == '+' || c == '.' || c == ')' || (c >= '0' && c <= '9'):
			if n++; n > maxNesting {
				return true
			}
		default:
			n = -1 // past the line's markers
		}
	}
	return false
}

func renderPlain(src string, o Options) []string {
	r := renderer{width: max(o.Width, 2), paint: o.Paint}
	for _, l := range strings.Split(src, "\n") {
		r.emit(r.wrap([]span{{text: l}}, r.width))
	}
	return r.out
}

func renderParsed(src string, o Options) []string { return renderWith(md(), src, o) }

func renderWith(p parser.Parser, src string, o Options) []string {
	r := renderer{width: max(o.Width, 2), paint: o.Paint, src: []byte(src)}
	r.blocks(p.Parse(text.NewReader(r.src)))
	return r.out
}

// md is built once, on the first text that needs the parser: a parser is
// safe for concurrent use, and building one costs more than parsing a
// message. Not at package init, so a command that draws no Markdown (chat
// send, chat --help) does not build it or compile linkify's expressions
// (gfm.go).
var md = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
			util.Prioritized(strikethrough{}, 500), util.Prioritized(newLinkify(), 999))...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
})

// plainText reports whether src would parse as nothing but one paragraph of
// text lines, drawn as written. Most chat messages are such text; for them
// Render skips the parser (a third of the cost, docs/tui.md), and
// FuzzPlainPath checks that both ways draw the same lines.
//
// A byte rules it out where Markdown gives that byte a meaning there:
// anywhere for emphasis, code, links, HTML, escapes and entities; at a
// line's start for the block markers (a heading, a quote, a list, a rule, a
// setext underline); "://" and "www." for the addresses linkify takes, and
// an '@' inside a word for an e-mail address; a blank line, leading or
// trailing space, a tab. The same bytes elsewhere are text: chat writes
// "end-of-run", "3 + 4", "note: done" and "@bob" far more often than
// Markdown, and the parser gives them no meaning there.
func plainText(src string) bool {
	if src == "" {
		return false
	}
	lineStart := true
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '*', '_', '`', '[', ']', '<', '\\', '&', '~', '\t':
			return false
		case '\n':
			if lineStart || i == len(src)-1 {
				return false // a blank line, or a last one
			}
			lineStart = true
			continue
		case ' ':
			if lineStart || i == len(src)-1 || src[i+1] == '\n' {
				return false // leading or trailing space
			}
		case '#', '>', '-', '+', '=':
			if lineStart {
				return false // a heading, a quote, a list item, a rule or an underline
			}
		case ':':
			if strings.HasPrefix(src[i:], "://") {
				return false // an address linkify takes
			}
		case '@':
			if !lineStart && src[i-1] != ' ' {
				return false // an e-mail address linkify takes
			}
		case 'w', 'W':
			if i+3 < len(src) && strings.EqualFold(src[i:i+4], "www.") {
				return false
			}
		default:
			if lineStart && c >= '0' && c <= '9' && orderedMarker(src[i:]) {
				return false
			}
		}
		lineStart = false
	}
	return true
}

// orderedMarker reports whether line starts as an ordered list item does:
// digits, then '.' or ')'.
func orderedMarker(line string) bool {
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i < len(line) && (line[i] == '.' || line[i] == ')')
}
