package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// linePaint draws one line of text in a lipgloss style as the same bytes
// Style.Render gives, from the escape sequences before and after the text,
// worked out once. Render builds its attributes again for every call and
// walks margins, borders and alignment that a plain coloured style has none
// of: drawing a message went through it for every run of text, the line's
// text and the time and name (a third of the chat's Update per message).
// TestLinePaintIsRender checks every style the chat draws with, and
// FuzzLinePaintIsRender any text, against Render.
type linePaint struct {
	style     lipgloss.Style
	pre, post string
	// direct: the style draws one line as pre+text+post; otherwise (width,
	// padding, margins, borders, a transform, spaces styled apart) Render
	// does the drawing.
	direct bool
}

func newLinePaint(st lipgloss.Style) linePaint {
	p := linePaint{style: st}
	border, top, right, bottom, left := st.GetBorder()
	if st.GetWidth() != 0 || st.GetHeight() != 0 || st.GetMaxWidth() != 0 || st.GetMaxHeight() != 0 ||
		st.GetHorizontalPadding() != 0 || st.GetVerticalPadding() != 0 ||
		st.GetHorizontalMargins() != 0 || st.GetVerticalMargins() != 0 ||
		st.GetHorizontalBorderSize() != 0 || st.GetVerticalBorderSize() != 0 ||
		border != (lipgloss.Border{}) || top || right || bottom || left ||
		st.GetTransform() != nil || st.GetUnderline() || st.GetStrikethrough() ||
		st.GetUnderlineSpaces() || st.GetStrikethroughSpaces() || st.Value() != "" {
		return p
	}
	if link, _ := st.GetHyperlink(); link != "" {
		return p
	}
	// A probe no style's escape sequences contain: Render puts the text
	// between the style's sequences and its reset.
	const probe = "\x00"
	pre, post, ok := strings.Cut(st.Render(probe), probe)
	if !ok || strings.Contains(post, probe) {
		return p
	}
	p.pre, p.post, p.direct = pre, post, true
	return p
}

// Render is p's style's Render of text.
func (p linePaint) Render(text string) string {
	if !p.direct || strings.ContainsAny(text, "\t\r\n") {
		// Tabs become spaces, lines are styled one by one: Render's own work.
		return p.style.Render(text)
	}
	if p.pre == "" && p.post == "" {
		return text
	}
	return p.pre + text + p.post
}

// paint is the linePaint of one of s's styles, given by its field
// (&s.Time), built on first use: the styles are not changed once built.
func (s *Styles) paint(field *lipgloss.Style) linePaint {
	if p, ok := s.paints[field]; ok {
		return p
	}
	if s.paints == nil {
		s.paints = map[*lipgloss.Style]linePaint{}
	}
	p := newLinePaint(*field)
	s.paints[field] = p
	return p
}

// senderPaint is the linePaint of Sender(userID).
func (s *Styles) senderPaint(userID string) linePaint {
	if s.senderPaints == nil {
		s.senderPaints = make([]linePaint, len(s.senderPalette))
		for i := range s.senderPalette {
			s.senderPaints[i] = newLinePaint(s.senderStyle(i))
		}
	}
	return s.senderPaints[s.senderColour(userID)]
}
