package mdterm

import (
	"slices"
	"testing"
)

// plainChat is text as people write it in chat, with bytes Markdown gives a
// meaning only elsewhere (a '-' inside a word, a ':' not before "//", an
// '@' starting a word, a digit not starting a list item, '#', '>', '+', '='
// and '!' inside a line).
var plainChat = []string{
	"message 17 of end-of-run-02, about as long as people type",
	"note: the build is green again!",
	"@bob can you look at issue #28?",
	"3 people said yes, 2 said no",
	"2024 was a good year",
	"a -> b, c => d, 3 + 4 = 7",
	"ok!\nsee you at 10:30\n@carol too",
	"x > y and y | z",
	"well-known e-mail etiquette",
}

// notPlain is text whose bytes mean something where they stand: the parser
// must draw it.
var notPlain = []string{
	"- item", "+ item", "# title", "> quote", "1. first", "12) twelfth", "a\n===", "a\n---",
	"see https://go.dev", "www.example.com", "mail bob@example.com", "x@y.z",
	"**b**", "_i_", "~~s~~", "`c`", "[l](u)", "<b>", "a\\b", "AT&amp;T", "a\tb",
	" lead", "trail ", "a\n\nb", "end\n",
}

func TestPlainTextTakesTheFastPath(t *testing.T) {
	for _, src := range plainChat {
		if !plainText(src) {
			t.Errorf("%q takes the parser", src)
		}
		for _, w := range []int{2, 9, 17, 40, 200} {
			if fast, parsed := renderPlain(src, Options{Width: w}), renderParsed(src, Options{Width: w}); !slices.Equal(fast, parsed) {
				t.Errorf("%q at %d: fast %q, parsed %q", src, w, fast, parsed)
			}
		}
	}
	for _, src := range notPlain {
		if plainText(src) {
			t.Errorf("%q takes the fast path", src)
		}
	}
}
