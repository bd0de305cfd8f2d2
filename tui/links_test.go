package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A web address longer than the line is cut into line-wide pieces, each a
// link (OSC 8) to the whole address; words around it wrap as usual; no line
// is wider than asked.
func TestWrapTextKeepsAddressesWhole(t *testing.T) {
	url := "https://ci.example.com/builds/2026/11/25/deploy-pipeline-run-4821/logs?step=integration&attempt=2"
	lines := wrapText("the failing run: "+url+", see step 3", 40)
	link := ansi.SetHyperlink(url)
	var pieces []string
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %q is %d cells wide", l, w)
		}
		if strings.Contains(l, link) {
			pieces = append(pieces, ansi.Strip(l))
		}
	}
	joined := strings.Join(pieces, "")
	if !strings.Contains(joined, url) {
		t.Fatalf("the linked pieces %q do not make the address", pieces)
	}
	if got := ansi.Strip(lines[0]); got != "the failing run:" {
		t.Errorf("first line %q: the address starts a line of its own", got)
	}
	if got := ansi.Strip(lines[len(lines)-1]); !strings.HasSuffix(got, "see step 3") {
		t.Errorf("last line %q", got)
	}
	// Text without an address wraps as before, with no link in it.
	if got := wrapText("no links here at all, just words to wrap", 12); strings.Contains(strings.Join(got, ""), "\x1b]8") || len(got) < 3 {
		t.Errorf("plain text: %q", got)
	}
	// Not an address: other schemes, control characters.
	for _, w := range []string{"javascript://x", "ftp://host/file", "https://a\x07b"} {
		if linkTarget(w) != "" {
			t.Errorf("%q taken for an address", w)
		}
	}
}
