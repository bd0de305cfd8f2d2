package mdterm

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// tags paints a run as <flags>text</>, so tests read what style each run got
// without escape sequences.
func tags(text string, s Style) string {
	var f []string
	for _, x := range []struct {
		s Style
		n string
	}{{Bold, "b"}, {Italic, "i"}, {Strike, "s"}, {Code, "code"}, {Link, "a"}, {URL, "url"}, {Quote, "q"}, {Marker, "m"}} {
		if s&x.s != 0 {
			f = append(f, x.n)
		}
	}
	if s == 0 {
		return text
	}
	return "<" + strings.Join(f, ",") + ">" + text + "</>"
}

func TestConstructs(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // plain
		painted   []string // through tags; nil: not checked
	}{
		{"plain", "hello world", []string{"hello world"}, []string{"hello world"}},
		{"empty", "", nil, nil},
		{"bold and italic", "**bold** and *it* and _it_", []string{"bold and it and it"},
			[]string{"<b>bold</> and <i>it</> and <i>it</>"}},
		{"nested emphasis", "***both***", []string{"both"}, []string{"<b,i>both</>"}},
		{"strikethrough", "~~gone~~ kept", []string{"gone kept"}, []string{"<s>gone</> kept"}},
		{"inline code kept as typed", "run `a *b* \\n`", []string{"run a *b* \\n"}, []string{"run <code>a *b* \\n</>"}},
		{"escapes", `\*not italic\*`, []string{"*not italic*"}, nil},
		{"line breaks kept", "one\ntwo", []string{"one", "two"}, nil},
		{"paragraphs", "one\n\n\ntwo", []string{"one", "", "two"}, nil},
		{"quote", "> said\n> this\n\nreply", []string{"│ said", "│ this", "", "reply"},
			[]string{"<q>│ </>said", "<q>│ </>this", "", "reply"}},
		{"nested quote", "> a\n>> b", []string{"│ a", "│ │ b"}, nil},
		{"bullets", "- a\n- b\n  - c", []string{"• a", "• b", "  • c"}, []string{"<m>• </>a", "<m>• </>b", "  <m>• </>c"}},
		{"numbers", "3. x\n4. y", []string{"3. x", "4. y"}, nil},
		{"fenced code", "```go\nfunc f() {\n    return *p\n}\n```", []string{"  func f() {", "      return *p", "  }"},
			[]string{"  <code>func f() {</>", "  <code>    return *p</>", "  <code>}</>"}},
		{"indented code", "text\n\n    x := 1", []string{"text", "", "  x := 1"}, nil},
		{"heading", "# Title\nbody", []string{"Title", "body"}, []string{"<b>Title</>", "body"}},
		{"rule", "a\n\n---\n\nb", []string{"a", "", strings.Repeat("─", 20), "", "b"}, nil},
		{"link with other text shows its target", "[docs](https://example.com/d)", []string{"docs (https://example.com/d)"},
			[]string{"\x1b]8;;https://example.com/d\a<a>docs</><url> (https://example.com/d)</>\x1b]8;;\a"}},
		{"bare address", "see https://go.dev/x.", []string{"see https://go.dev/x."},
			[]string{"see \x1b]8;;https://go.dev/x\a<a>https://go.dev/x</>\x1b]8;;\a."}},
		{"link to itself", "<https://a.example>", []string{"https://a.example"}, nil},
		{"link that is no web address is not linked", "[x](javascript:alert(1))", []string{"x (javascript:alert(1))"},
			[]string{"<a>x</><url> (javascript:alert(1))</>"}},
		{"image", "![cat](https://img.example/c.png)", []string{"[image: cat (https://img.example/c.png)]"}, nil},
		{"html is text", "<b>hi</b>", []string{"<b>hi</b>"}, nil},
		{"entities as typed", "AT&amp;T", []string{"AT&amp;T"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Render(c.src, Options{Width: 40}); !slices.Equal(got, c.want) {
				t.Errorf("plain:\n got %q\nwant %q", got, c.want)
			}
			if c.painted == nil {
				return
			}
			if got := Render(c.src, Options{Width: 40, Paint: tags}); !slices.Equal(got, c.painted) {
				t.Errorf("painted:\n got %q\nwant %q", got, c.painted)
			}
		})
	}
}

func TestWrapping(t *testing.T) {
	t.Run("words", func(t *testing.T) {
		got := Render("the quick brown fox jumps over the lazy dog", Options{Width: 10})
		want := []string{"the quick", "brown fox", "jumps over", "the lazy", "dog"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("styled words wrap as words", func(t *testing.T) {
		got := Render("**bold**text and more", Options{Width: 9})
		want := []string{"boldtext", "and more"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("quote and list text wraps inside its prefix", func(t *testing.T) {
		got := Render("> one two three\n\n- four five six", Options{Width: 10})
		want := []string{"│ one two", "│ three", "", "• four", "  five six"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("an address is cut, not broken at its hyphens, each piece linked", func(t *testing.T) {
		url := "https://ci.example/run-12345-abcdef"
		got := Render("log: "+url, Options{Width: 20, Paint: tags})
		if len(got) != 3 {
			t.Fatalf("got %q", got)
		}
		var joined string
		for _, l := range got[1:] {
			if !strings.HasPrefix(l, "\x1b]8;;"+url+"\a") {
				t.Errorf("piece %q does not link to the whole address", l)
			}
			joined += ansi.Strip(strings.ReplaceAll(strings.ReplaceAll(l, "<a>", ""), "</>", ""))
		}
		if joined != url {
			t.Errorf("pieces make %q", joined)
		}
	})
	t.Run("code is cut with a mark, never re-flowed", func(t *testing.T) {
		got := Render("```\nabcdefghijklmnop qr\n  x\n```", Options{Width: 10})
		want := []string{"  abcdefg↩", "  hijklmn↩", "  op qr", "    x"}
		if !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("wide characters", func(t *testing.T) {
		got := Render("日本語のテキスト", Options{Width: 5})
		for _, l := range got {
			if w := ansi.StringWidth(l); w > 5 {
				t.Errorf("%q is %d cells", l, w)
			}
		}
		if strings.Join(got, "") != "日本語のテキスト" {
			t.Errorf("got %q", got)
		}
	})
}

func TestANSIPainter(t *testing.T) {
	got := Render("**b** `c` [l](https://x.example)", Options{Width: 80, Paint: ANSI})
	if len(got) != 1 {
		t.Fatalf("got %q", got)
	}
	for _, want := range []string{"\x1b[1mb\x1b[m", "\x1b[36mc\x1b[m", "\x1b]8;;https://x.example\a\x1b[4ml\x1b[m"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("%q lacks %q", got[0], want)
		}
	}
	if s := ansi.Strip(got[0]); s != "b c l (https://x.example)" {
		t.Errorf("stripped: %q", s)
	}
}

func TestTooDeepIsDrawnAsWritten(t *testing.T) {
	deep := strings.Repeat(">", maxNesting+1) + " x"
	got := strings.Join(Render(deep, Options{Width: 400}), "")
	if got != deep {
		t.Errorf("nesting past the bound: got %q, want the text as written", got)
	}
	shallow := strings.Repeat(">", 3) + " x"
	if got := Render(shallow, Options{Width: 40}); !slices.Equal(got, []string{"│ │ │ x"}) {
		t.Errorf("nesting within the bound: got %q", got)
	}
}
