package mdterm

import "github.com/charmbracelet/x/ansi"

// ANSI paints with plain SGR attributes, no colours but the code's: for the
// CLI writing to a terminal, whose own palette and background it keeps.
func ANSI(text string, s Style) string {
	var st ansi.Style
	if s&Bold != 0 {
		st = st.Bold()
	}
	if s&Italic != 0 {
		st = st.Italic(true)
	}
	if s&Strike != 0 {
		st = st.Strikethrough(true)
	}
	if s&Link != 0 {
		st = st.Underline(true)
	}
	if s&(URL|Quote|Marker) != 0 {
		st = st.Faint()
	}
	if s&Code != 0 {
		st = st.ForegroundColor(ansi.Cyan)
	}
	if len(st) == 0 {
		return text
	}
	return st.Styled(text)
}
