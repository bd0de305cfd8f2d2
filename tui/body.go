package tui

import (
	"charm.land/lipgloss/v2"

	"github.com/chatterm/chat/internal/mdterm"
	"github.com/chatterm/chat/wire"
)

// bodyKey is what a message's drawn text depends on: the message, its
// content version (an edit moves UpdatedSeq), the width and the styles.
type bodyKey struct {
	messageID string
	updated   int64
	width     int
	styles    *Styles
	mention   bool // drawn in the mention style (mentions.go)
}

// bodyCache keeps messages' text as drawn. A message's lines are drawn again
// for reasons that leave its text alone (a tick, the selection, the sender
// shown or not); parsing Markdown each time would cost tens of microseconds
// a message (docs/tui.md, "Formatted text").
type bodyCache map[bodyKey][]string

// maxBodies bounds the cache: past it the cache starts again, as a width
// change would leave every entry stale anyway.
const maxBodies = 8192

// bodyLines is a message's text as the chat shows it: its Markdown drawn by
// internal/mdterm at w cells, in the chat's styles, with links as OSC 8
// hyperlinks. It is the one function the message renderer calls for text,
// and it is cached per message id, edit and width.
func (m *chatModel) bodyLines(x wire.Message, w int) []string {
	return m.bodyLinesAs(x, w, m.c.mentionsMe(x))
}

// bodyLinesAs is bodyLines for a caller that knows whether x mentions the
// user (messageLines, which draws the line in that style too).
func (m *chatModel) bodyLinesAs(x wire.Message, w int, mention bool) []string {
	if x.Content == "" {
		return nil
	}
	k := bodyKey{messageID: x.MessageID, updated: x.UpdatedSeq, width: w, styles: m.c.styles, mention: mention}
	paint := m.c.styles.paintText
	if k.mention {
		paint = m.c.styles.paintMention
	}
	if x.MessageID == "" {
		return mdterm.Render(x.Content, mdterm.Options{Width: w, Paint: paint})
	}
	if lines, ok := m.bodies[k]; ok {
		return lines
	}
	if m.bodies == nil || len(m.bodies) >= maxBodies {
		m.bodies = bodyCache{}
	}
	lines := mdterm.Render(x.Content, mdterm.Options{Width: w, Paint: paint})
	m.bodies[k] = lines
	return lines
}

// paintText draws a run of message text in the chat's colours.
func (s *Styles) paintText(text string, st mdterm.Style) string {
	return s.textPaint(st, false).Render(text)
}

// paintMention draws a run of a message that mentions the user: on the
// mention style, so the whole text stands out, its formatting kept.
func (s *Styles) paintMention(text string, st mdterm.Style) string {
	return s.textPaint(st, true).Render(text)
}

// textKind is a kind of message text: its Markdown style, and whether the
// message mentions the user.
type textKind struct {
	style   mdterm.Style
	mention bool
}

// textPaint draws a kind of message text, built once per Styles and kind: a
// message's runs are few kinds many times over.
func (s *Styles) textPaint(st mdterm.Style, mention bool) linePaint {
	kind := textKind{st, mention}
	if p, ok := s.text[kind]; ok {
		return p
	}
	p := newLinePaint(s.textStyle(st, mention))
	if s.text == nil {
		s.text = map[textKind]linePaint{}
	}
	s.text[kind] = p
	return p
}

// textStyle is the lipgloss style of a kind of message text.
func (s *Styles) textStyle(st mdterm.Style, mention bool) lipgloss.Style {
	ls := s.Content
	if mention {
		ls = s.Mention
	}
	if st&mdterm.Bold != 0 {
		ls = ls.Bold(true)
	}
	if st&mdterm.Italic != 0 {
		ls = ls.Italic(true)
	}
	if st&mdterm.Strike != 0 {
		ls = ls.Strikethrough(true)
	}
	if st&mdterm.Code != 0 {
		ls = ls.Foreground(s.Accent.GetForeground())
	}
	if st&mdterm.Link != 0 {
		ls = ls.Underline(true)
	}
	if st&(mdterm.URL|mdterm.Quote|mdterm.Marker) != 0 {
		ls = ls.Foreground(s.Subtle.GetForeground())
	}
	return ls
}
