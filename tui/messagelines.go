package tui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/wire"
)

// messageLines draws a message as the history shows it: the time, the sender
// column, the text wrapped beside them, the tick at the end of the text, then
// reactions and a reason not sent. widths are the lines' widths in cells,
// known from their parts as they are put together, so drawMessages does not
// measure the lines again. What is the same for many messages (the time of a
// second, a sender's name at a column width, the blanks) is drawn once and
// kept (lineParts).
func (m *chatModel) messageLines(x wire.Message, k lineKey) (lines []string, widths []int, tickBack int) {
	showName, senderW, t := k.showName, k.senderW, k.tick
	s := m.c.styles
	// On a wide terminal text wraps at maxContentW and the tick follows it,
	// rather than sitting a screen's width away from a short message.
	w := min(m.width, timeColW+senderW+1+maxContentW+tickColW)
	contentW := max(w-timeColW-senderW-1-tickColW, 8)
	parts := &m.parts
	parts.reset(s)
	timeStr := parts.stamp(m, x, k.selected)
	name, nameW := blanks(senderW), senderW
	if showName {
		name, nameW = parts.name(m, x.SenderID, senderW)
	}
	indentW := timeColW + senderW + 1
	indent := blanks(indentW)
	mention := m.c.mentionsMe(x)
	var body []string
	if k.quote != "" {
		body = append(body, s.paint(&s.Faint).Render(ansi.Truncate(k.quote, contentW, "…")))
	}
	switch {
	case x.Deleted:
		body = append(body, s.Faint.Italic(true).Render("message deleted"))
	default:
		text := m.bodyLinesAs(x, contentW, mention) // none for an attachment alone: its line says it all
		if body == nil && x.Attachment == "" && !x.Edited {
			body = text // drawn into lines below, never changed: the cache's slice serves
		} else {
			body = append(body, text...)
		}
		if x.Attachment != "" {
			body = append(body, s.paint(&s.Accent).Render(ansi.Truncate(attachmentLine(x), contentW, "…")))
		}
	}
	if len(body) == 0 {
		body = []string{""}
	}
	last := body[len(body)-1]
	if x.Edited && !x.Deleted {
		last += s.paint(&s.Faint).Render(" (edited)")
	}
	text := s.paint(&s.Content)
	if mention { // a mention or highlight word: the line stands out (mentions.go)
		text = s.paint(&s.Mention)
	}
	extra := 0
	var reactions string
	if len(x.Reactions) > 0 && !x.Deleted {
		reactions = reactionsLine(x.Reactions, m.c.me)
	}
	if reactions != "" {
		extra++
	}
	reason, bad := m.failed[x.MessageID]
	if bad {
		extra++
	}
	lines = make([]string, len(body), len(body)+extra)
	widths = make([]int, len(body), len(body)+extra)
	for i, b := range body {
		if i == len(body)-1 {
			b = last
		}
		prefix, prefixW := indent, indentW
		if i == 0 {
			prefix, prefixW = timeStr+name+" ", timeColW+nameW+1
		}
		line := prefix + text.Render(b)
		if strings.ContainsAny(b, "\t\r\n") {
			// Not a line as mdterm draws them: measured whole, as lipgloss
			// and the history do.
			if i == len(body)-1 && t != tickNone {
				line += blanks(max(w-lipgloss.Width(line)-tickGlyphW-1, 1))
				if t != tickLater {
					line += m.tickGlyph(t)
				}
			}
			lines[i], widths[i] = line, ansi.StringWidth(line)
			continue
		}
		lw := prefixW + lineWidth(b)
		if i == len(body)-1 && t != tickNone {
			pad := max(w-lw-tickGlyphW-1, 1)
			line += blanks(pad)
			lw += pad
			if t != tickLater {
				line += m.tickGlyph(t)
				lw += tickGlyphW
			}
		}
		lines[i], widths[i] = line, lw
	}
	n := len(lines)
	if reactions != "" {
		l := indent + s.paint(&s.Subtle).Render(ansi.Truncate(reactions, contentW, "…"))
		lines, widths = append(lines, l), append(widths, lineWidth(l))
	}
	if bad {
		l := indent + s.paint(&s.Error).Render(ansi.Truncate("not sent: "+reason, contentW, "…"))
		lines, widths = append(lines, l), append(widths, lineWidth(l))
	}
	return lines, widths, len(lines) - n
}

// lineParts keeps the parts of message lines that many messages share,
// drawn in the styles they were drawn with.
type lineParts struct {
	styles *Styles
	// The time column of the last second drawn: a stream's messages come
	// many to a second.
	stampUnix     int64
	stampLoc      *time.Location
	stampSelected bool
	stampSet      bool
	stampText     string
	// names by sender, column width and the names' version.
	names map[senderKey]drawnName
}

type senderKey struct {
	id       string
	w, names int
}

// maxSenderNames bounds the names kept: past it they are drawn again.
const maxSenderNames = 1024

func (p *lineParts) reset(s *Styles) {
	if p.styles != s {
		*p = lineParts{styles: s}
	}
}

// stamp is the time column of x: "15:04 ", or "▶15:04" for the selected
// message. Kept per second, not per minute: a zone's offset need not be
// whole minutes.
func (p *lineParts) stamp(m *chatModel, x wire.Message, selected bool) string {
	u := x.Timestamp.Unix()
	if p.stampSet && p.stampUnix == u && p.stampLoc == m.c.loc && p.stampSelected == selected {
		return p.stampText
	}
	s := m.c.styles
	hm := x.Timestamp.In(m.c.loc).Format("15:04")
	t := s.paint(&s.Time).Render(hm + " ")
	if selected {
		t = s.paint(&s.Cursor).Render("▶") + s.paint(&s.Time).Render(hm)
	}
	p.stampUnix, p.stampLoc, p.stampSelected, p.stampSet, p.stampText = u, m.c.loc, selected, true, t
	return t
}

// name is a sender's name in the sender column, cut to w cells and padded
// to them, and the cells it takes as drawn: w, unless the id holds what
// Render draws wider than it measures (a tab, from a server that breaks the
// user-id rules).
func (p *lineParts) name(m *chatModel, id string, w int) (string, int) {
	k := senderKey{id: id, w: w, names: m.c.names.dir.Version()}
	if n, ok := p.names[k]; ok {
		return n.text, n.width
	}
	s := m.c.styles
	n := ansi.Truncate(m.c.who(id), w, "…")
	pad := blanks(w - ansi.StringWidth(n))
	if id == m.c.me {
		n = s.paint(&s.Me).Render(n) + pad
	} else {
		n = s.senderPaint(id).Render(n) + pad
	}
	if p.names == nil || len(p.names) >= maxSenderNames {
		p.names = map[senderKey]drawnName{}
	}
	d := drawnName{n, ansi.StringWidth(n)}
	p.names[k] = d
	return d.text, d.width
}

// drawnName is a sender column's text and the cells it takes.
type drawnName struct {
	text  string
	width int
}

// blankRun is where blanks takes its spaces from.
var blankRun = strings.Repeat(" ", 256)

// blanks is n spaces, without allocating for the widths a line has.
func blanks(n int) string {
	if n <= len(blankRun) {
		return blankRun[:max(n, 0)]
	}
	return strings.Repeat(" ", n)
}
