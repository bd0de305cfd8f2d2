package mdterm

// The two GFM inline parsers mdterm uses, ~~strikethrough~~ and bare
// addresses as links, adapted from goldmark v1.8.7's extension package
// (extension/strikethrough.go and extension/linkify.go) so that package is
// not linked: its variables compile its regular expressions (linkify's and
// the table's) when any program that links it starts, 3–9 ms of every run
// of chat, though chat send and chat --help never draw Markdown
// (docs/tui.md, "Formatted text"). Here the expressions are compiled on the
// first text that needs the parser. TestConstructs and FuzzRender hold both
// to what goldmark's own did.
//
// goldmark is Copyright (c) 2019 Yusuke Inuzuka, under the MIT License:
// Permission is hereby granted, free of charge, to any person obtaining a
// copy of this software and associated documentation files (the
// "Software"), to deal in the Software without restriction, including
// without limitation the rights to use, copy, modify, merge, publish,
// distribute, sublicense, and/or sell copies of the Software, and to permit
// persons to whom the Software is furnished to do so, subject to the
// following conditions: The above copyright notice and this permission
// notice shall be included in all copies or substantial portions of the
// Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
// EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
// MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
// NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
// DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
// OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
// USE OR OTHER DEALINGS IN THE SOFTWARE.

import (
	"bytes"
	"regexp"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// strikethrough parses ~~text~~ (and ~text~) as GFM does.
type strikethrough struct{}

func (strikethrough) IsDelimiter(b byte) bool { return b == '~' }

func (strikethrough) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (strikethrough) OnMatch(consumes int) ast.Node { return east.NewStrikethrough() }

func (strikethrough) Trigger() []byte { return []byte{'~'} }

func (s strikethrough) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, s)
	if node == nil || node.OriginalLength > 2 || before == '~' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (strikethrough) CloseBlock(parent ast.Node, pc parser.Context) {}

// linkify takes http, https and mailto addresses, www. addresses and e-mail
// addresses in text for links, as GFM does, with the expressions given
// (compiled once, by the parser's builder in mdterm.go).
type linkify struct {
	url, www *regexp.Regexp
}

// The expressions of goldmark's linkify, as they are there.
const (
	linkifyWWW = `^www\.[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?:[/#?][-a-zA-Z0-9@:%_\+.~#!?&/=\(\);,'">\^{}\[\]` + "`" + `]*)?`
	linkifyURL = `^(?:http|https|ftp)://[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?::\d+)?(?:[/#?][-a-zA-Z0-9@:%_+.~#$!?&/=\(\);,'">\^{}\[\]` + "`" + `]*)?`
)

// linkifyProtocols are the address schemes taken for links (goldmark's
// WithLinkifyAllowedProtocols, as mdterm set it).
var linkifyProtocols = [][]byte{[]byte("http:"), []byte("https:"), []byte("mailto:")}

func newLinkify() *linkify {
	return &linkify{url: regexp.MustCompile(linkifyURL), www: regexp.MustCompile(linkifyWWW)}
}

func (*linkify) Trigger() []byte {
	// ' ' stands for any white space and a line's start.
	return []byte{' ', '*', '_', '~', '('}
}

func (s *linkify) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if pc.IsInLinkLabel() {
		return nil
	}
	line, segment := block.PeekLine()
	consumes := 0
	start := segment.Start
	c := line[0]
	// Past the trigger, when it is not the line's start.
	if c == ' ' || c == '*' || c == '_' || c == '~' || c == '(' {
		consumes++
		start++
		line = line[1:]
	}

	var m []int
	var protocol []byte
	typ := ast.AutoLinkURL
	for _, prefix := range linkifyProtocols {
		if bytes.HasPrefix(line, prefix) {
			m = s.url.FindSubmatchIndex(line)
			break
		}
	}
	if m == nil && bytes.HasPrefix(line, []byte("www.")) {
		m = s.www.FindSubmatchIndex(line)
		protocol = []byte("http")
	}
	if m != nil && m[0] != 0 {
		m = nil
	}
	if m == nil {
		if len(line) > 0 && util.IsPunct(line[0]) {
			return nil
		}
		typ = ast.AutoLinkEmail
		stop := util.FindEmailIndex(line)
		if stop < 0 {
			return nil
		}
		at := bytes.IndexByte(line, '@')
		m = []int{0, stop, at, stop - 1}
		if bytes.IndexByte(line[m[2]:m[3]], '.') < 0 {
			return nil
		}
		if line[m[1]-1] == '.' {
			m[1]--
		}
		if m[1] < len(line) {
			if next := line[m[1]]; next == '-' || next == '_' {
				return nil
			}
		}
	}
	if consumes != 0 {
		s := segment.WithStop(segment.Start + 1)
		ast.MergeOrAppendTextSegment(parent, s)
	}
	opening := bytes.Count(line[:m[1]], []byte{'('})
	closing := bytes.Count(line[:m[1]], []byte{')'})
	i := m[1]
	// Trailing punctuation is the sentence's, not the address's.
trim:
	for i > 1 {
		switch line[i-1] {
		case '?', '!', '.', ',', ':', '*', '_', '~':
			i--
		case ')':
			if closing <= opening {
				break trim
			}
			closing--
			i--
		case ';':
			j := i - 2
			for ; j > 0; j-- {
				if !util.IsAlphaNumeric(line[j]) {
					break
				}
			}
			if j == i-2 || line[j] != '&' {
				break trim
			}
			i = j
		default:
			break trim
		}
	}
	consumes += i
	block.Advance(consumes)
	n := ast.NewTextSegment(text.NewSegment(start, start+i))
	link := ast.NewAutoLink(typ, n)
	link.Protocol = protocol
	return link
}

func (*linkify) CloseBlock(parent ast.Node, pc parser.Context) {}
