package mdterm

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/termtext"
)

// The cost of drawing one message, as the TUI does once per message and
// width (docs/tui.md, "Formatted text"). baseline is what drawing cost
// before Markdown: the sanitiser and a word wrap of each line.
var benchTexts = map[string]string{
	"plain": "sounds good, I will push the fix after lunch and ping you when the build is green again",
	"markdown": "the **build** is red again: `go test ./server` fails in *TestSend*, see https://ci.example/run/1234\n" +
		"> it was green yesterday\n- rerun it\n- then bisect",
	// chat is plain text with bytes Markdown reads only elsewhere (a '-'
	// inside a word, a ':'), as chatbench tui-burst sends: the parser drew
	// it before the fast path took such text.
	"chat": "message 17 of end-of-run-02, about as long as people type: ok",
	"code": "```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```",
}

func BenchmarkRender(b *testing.B) {
	for _, name := range []string{"plain", "chat", "markdown", "code"} {
		src := benchTexts[name]
		b.Run(name+"/baseline", func(b *testing.B) {
			for b.Loop() {
				for _, l := range strings.Split(termtext.Clean(src, true), "\n") {
					_ = ansi.Wrap(l, 60, "")
				}
			}
		})
		b.Run(name+"/plain", func(b *testing.B) {
			for b.Loop() {
				Render(src, Options{Width: 60})
			}
		})
		b.Run(name+"/ansi", func(b *testing.B) {
			for b.Loop() {
				Render(src, Options{Width: 60, Paint: ANSI})
			}
		})
	}
	for _, name := range []string{"plain", "chat"} {
		b.Run(name+"/parsed", func(b *testing.B) {
			for b.Loop() {
				renderParsed(benchTexts[name], Options{Width: 60})
			}
		})
	}
}
