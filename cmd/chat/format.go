package main

import (
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/chatterm/chat/internal/mdterm"
	"github.com/chatterm/chat/internal/termtext"
)

// textFormat is how message text is printed: its Markdown drawn (styled and
// fitted to the terminal when standard output is one, plain text with no
// escape sequence when it is a file or a pipe), or with raw the text as
// stored. Either way it passes through the sanitiser (docs/security.md).
type textFormat struct {
	raw   bool
	paint mdterm.Painter
	width int
}

// unwrapped is the width text is drawn at for a file or a pipe: lines are
// not wrapped there, a reader's pager or editor does that.
const unwrapped = 1 << 20

// indent is what a message's lines after its first begin with, under the
// timestamp.
const indent = "    "

// textFormat decides the format for this run: NO_COLOR
// (https://no-color.org) keeps a terminal's output unstyled.
func (a *app) textFormat(raw bool) textFormat {
	f := textFormat{raw: raw, width: unwrapped}
	if w, ok := a.stdoutTerminal(); ok {
		f.width = max(w-len(indent), 20)
		if a.getenv("NO_COLOR") == "" {
			f.paint = mdterm.ANSI
		}
	}
	return f
}

// stdoutTerminal reports standard output's width when it is a terminal.
func (a *app) stdoutTerminal() (int, bool) {
	if a.stdoutTTY != nil {
		return a.stdoutTTY()
	}
	f, ok := a.stdout.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0, false
	}
	w, _, err := term.GetSize(f.Fd())
	if err != nil || w <= 0 {
		w = 80
	}
	return w, true
}

// body is a message's text for printing, its lines after the first indented.
func (f textFormat) body(content string) string {
	if content == "" {
		return ""
	}
	if f.raw {
		return strings.ReplaceAll(termtext.Clean(content, true), "\n", "\n"+indent)
	}
	return strings.Join(mdterm.Render(content, mdterm.Options{Width: f.width, Paint: f.paint}), "\n"+indent)
}
