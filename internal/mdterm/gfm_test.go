package mdterm

import (
	"slices"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/chatterm/chat/internal/termtext"
)

// goldmarkParser is the parser mdterm built before gfm.go: goldmark's own
// strikethrough and linkify extensions (linked into this test only).
func goldmarkParser() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.NewLinkify(
		extension.WithLinkifyAllowedProtocols([]string{"http:", "https:", "mailto:"})))).Parser()
}

var gfmSeeds = []string{
	"~~gone~~ kept", "~one~ ~~two~~ ~~~three~~~", "a~~b~~c", "~~ not ~~", "**~~both~~**",
	"see https://go.dev/x.", "(https://a.example/b_(c))", "www.example.com/path?q=1&r=2;", "https://x.example/a&amp;",
	"mail bob@example.com.", "bob@example.com-x", "x@y", "mailto:bob@example.com", "ftp://old.example/f",
	"http://[::1]/", "*https://a.example*", "_www.b.example_", "~https://c.example~", "[l](https://d.example) https://e.example",
	"HTTPS://UPPER.EXAMPLE", "https://a.example:8080/p", "a https://b.example), c",
}

// mdterm's strikethrough and linkify parse as goldmark's extensions do:
// every seed draws the same lines, plain and painted.
func TestGFMParsersAsGoldmarks(t *testing.T) {
	ref := goldmarkParser()
	for _, src := range gfmSeeds {
		for _, paint := range []Painter{nil, tags} {
			o := Options{Width: 30, Paint: paint}
			src := termtext.Clean(src, true)
			if got, want := renderParsed(src, o), renderWith(ref, src, o); !slices.Equal(got, want) {
				t.Errorf("%q:\n got %q\nwant %q", src, got, want)
			}
		}
	}
}

func FuzzGFMParsersAsGoldmarks(f *testing.F) {
	for _, s := range gfmSeeds {
		f.Add(s)
	}
	ref := goldmarkParser()
	f.Fuzz(func(t *testing.T, src string) {
		src = termtext.Clean(src, true)
		if tooDeep(src) {
			return
		}
		o := Options{Width: 40, Paint: tags}
		if got, want := renderParsed(src, o), renderWith(ref, src, o); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got %q\nwant %q", src, got, want)
		}
	})
}
