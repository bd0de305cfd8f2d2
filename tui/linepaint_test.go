package tui

import (
	"fmt"
	"reflect"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/mdterm"
)

// paintTexts are texts for drawing in a style: plain, wide, escapes,
// and what Render treats apart (tabs, line breaks, carriage returns).
var paintTexts = []string{"", "a", "hello world", "15:04 ", "▶", " lead", "trail ", "日本語", "👍🏽", "\x1b[31mred\x1b[m",
	"\x1b]8;;https://x.example\x07link\x1b]8;;\x07", "tab\there", "two\nlines", "cr\r\nlf", "\r", "\x00", "a  b"}

// everyStyle is every lipgloss style a Styles holds, the senders' and the
// message text's kinds, by name, with a few that Render draws with more
// than colours (padding, a width, a border, underline).
func everyStyle(s *Styles) map[string]lipgloss.Style {
	out := map[string]lipgloss.Style{}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if st, ok := v.Field(i).Interface().(lipgloss.Style); ok {
			out[v.Type().Field(i).Name] = st
		}
	}
	for i := range s.senderPalette {
		out[fmt.Sprint("sender", i)] = s.senderStyle(i)
	}
	for st := range mdterm.Style(1 << 8) {
		for _, mention := range []bool{false, true} {
			out[fmt.Sprint("text", st, mention)] = s.textStyle(st, mention)
		}
	}
	out["faint italic"] = s.Faint.Italic(true)
	out["padded"] = s.Content.Padding(0, 1)
	out["wide"] = s.Content.Width(10)
	out["set"] = s.Content.SetString("value")
	out["transformed"] = s.Content.Transform(func(t string) string { return t + "!" })
	out["none"] = lipgloss.NewStyle()
	out["tabs kept"] = s.Content.TabWidth(lipgloss.NoTabConversion)
	return out
}

// A linePaint draws every text as its style's Render does, for every style
// the screens use, on a dark and a light background.
func TestLinePaintIsRender(t *testing.T) {
	direct := 0
	for _, dark := range []bool{true, false} {
		for name, st := range everyStyle(NewStyles(dark)) {
			p := newLinePaint(st)
			if p.direct {
				direct++
			}
			for _, text := range paintTexts {
				if got, want := p.Render(text), st.Render(text); got != want {
					t.Errorf("%s (dark %v) of %q: %q, Render gives %q", name, dark, text, got, want)
				}
			}
		}
	}
	if direct == 0 {
		t.Fatal("no style is drawn without Render: the test no longer tests the direct drawing")
	}
}

func FuzzLinePaintIsRender(f *testing.F) {
	for _, text := range paintTexts {
		f.Add(text)
	}
	styles := everyStyle(NewStyles(true))
	paints := map[string]linePaint{}
	for name, st := range styles {
		paints[name] = newLinePaint(st)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for name, st := range styles {
			if got, want := paints[name].Render(text), st.Render(text); got != want {
				t.Fatalf("%s of %q: %q, Render gives %q", name, text, got, want)
			}
		}
	})
}

// lineWidth measures as ansi.StringWidth does: drawn lines (colours,
// hyperlinks), and anything else.
func FuzzLineWidth(f *testing.F) {
	s := NewStyles(true)
	for _, text := range paintTexts {
		f.Add(text)
		f.Add(s.Content.Render(text))
		f.Add(s.Time.Render("15:04 ") + s.Sender("bob").Render(text) + "   " + s.TickRead.Render("✓✓"))
	}
	for _, seq := range []string{"\x1b[", "\x1b[1;2", "\x1b[?25h", "\x1b[ q", "\x1b]8;;x", "\x1b]8;;x\x1b", "\x1b]8;;x\x1b\\y", "\x1bP", "\x1b", "\x7f", "\x9b"} {
		f.Add("a" + seq + "bc")
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := lineWidth(text), ansi.StringWidth(text); got != want {
			t.Fatalf("lineWidth(%q) = %d, ansi.StringWidth %d", text, got, want)
		}
	})
}
