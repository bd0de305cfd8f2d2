package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Ticks of stored messages are not in the history lines: View adds them to
// the lines on screen from the boundaries as they are then (chatModel.tickAt
// marks where), so a peer's boundary move, which comes with every message in
// a direct chat and every ack in a group, costs the screen's rows and not a
// walk of every loaded message.

// drawnState is what the history lines (chatModel.lines) were drawn from.
// When the only change since is messages appended at the end, render draws
// just those: a busy chat with thousands of messages loaded costs one
// message's lines per message, not a walk of all of them.
type drawnState struct {
	valid                      bool
	width, senderW             int
	loaded, more, loadingOlder bool
	selected, unreadFrom       int64
	msgs, version, failed      int
	names                      int // the display names' version (names.go)
	pending                    bool
	prev                       wire.Message // the last message drawn
	any                        bool         // prev is set
}

// render brings the history lines up to date after a change.
func (m *chatModel) render() {
	if m.width <= 0 {
		m.lines, m.lineSeq, m.lineW, m.tickAt, m.drawn = nil, nil, nil, nil, drawnState{}
		return
	}
	if !m.shown {
		// Off screen (the inbox is): the events are in m.msgs already;
		// drawn when the chat shows again (chatModel.show).
		m.dirty = true
		return
	}
	m.dirty = false
	m.draws++
	senderW := m.senderWidth()
	d := drawnState{valid: true, width: m.width, senderW: senderW,
		loaded: m.loaded, more: m.more, loadingOlder: m.loadingOlder, selected: m.selected, unreadFrom: m.unreadFrom,
		msgs: len(m.msgs), version: m.msgsVersion, failed: len(m.failed), pending: len(m.pending) > 0,
		names: m.c.names.dir.Version()}
	old := m.drawn
	if old.valid && !old.pending && !d.pending && old.version == d.version && old.msgs <= d.msgs &&
		old.width == d.width && old.senderW == d.senderW &&
		old.loaded == d.loaded && old.more == d.more && old.loadingOlder == d.loadingOlder &&
		old.selected == d.selected && old.unreadFrom == d.unreadFrom && old.failed == d.failed && old.names == d.names {
		d.prev, d.any = old.prev, old.any
		m.lines, m.lineSeq, m.lineW = m.drawMessages(m.lines, m.lineSeq, m.lineW, m.msgs[old.msgs:], &d)
		m.drawn = d
		m.afterLayoutChange()
		return
	}
	m.redraws++
	s := m.c.styles
	var out []string
	m.newLine, m.selLine = -1, -1
	if m.loaded && !m.more {
		out = append(out, centre(s.Faint.Render("· beginning of the conversation ·"), m.width))
	}
	if m.loadingOlder {
		out = append(out, centre(s.Subtle.Render("loading older messages…"), m.width))
	}
	seqs := make([]int64, len(out), len(m.lineSeq)+len(out))
	widths := make([]int, len(out), len(m.lineW)+len(out))
	for i, l := range out {
		widths[i] = ansi.StringWidth(l)
	}
	m.tickAt = map[int]int64{}
	out, seqs, widths = m.drawMessages(out, seqs, widths, m.msgs, &d)
	m.drawn = d
	if !m.behind { // they go after the newest, not under an older window
		out, seqs, widths = m.drawMessages(out, seqs, widths, m.pending, &d) // after what is stored, and never a base to append to
	}
	m.lines, m.lineSeq, m.lineW = out, seqs, widths
	m.afterLayoutChange()
}

// senderWidth is the width of the sender column: the widest member or sender
// name, within bounds.
func (m *chatModel) senderWidth() int {
	w := max(3, m.senderMax)
	for _, p := range m.participants {
		w = max(w, lineWidth(m.c.who(p.UserID))) // every member, every commit: without segmenting ASCII (linewidth.go)
	}
	return min(w, senderBound(m.width)) // sendercol.go
}

// drawMessages appends the lines of msgs to out, each line's seq_no to seqs
// (0 for separators and markers) and its width to widths, going on from d.prev.
func (m *chatModel) drawMessages(out []string, seqs []int64, widths []int, msgs []wire.Message, d *drawnState) ([]string, []int64, []int) {
	s := m.c.styles
	w := m.width
	now := m.c.now()
	for _, x := range msgs {
		if !visible(x) {
			if wire.IsMembershipKind(x.Kind) { // a line of its own (eventlines.go)
				out, seqs, widths = m.drawMembershipEvent(out, seqs, widths, x)
			}
			continue // any other event shows in the message it changed
		}
		prev, first := d.prev, !d.any
		ts := x.Timestamp
		if first || !sameDay(prev.Timestamp, ts, m.c.loc) {
			out = append(out, daySeparator(s, dayLabel(ts, now, m.c.loc), w))
			seqs = append(seqs, 0)
			widths = append(widths, ansi.StringWidth(out[len(out)-1]))
		}
		if m.unreadFrom > 0 && x.SeqNo >= m.unreadFrom && (first || prev.SeqNo < m.unreadFrom) && x.SeqNo > 0 {
			m.newLine = len(out)
			out = append(out, newMarker(s, w))
			seqs = append(seqs, 0)
			widths = append(widths, ansi.StringWidth(out[len(out)-1]))
		}
		showName := first || prev.SenderID != x.SenderID || !sameDay(prev.Timestamp, ts, m.c.loc) ||
			ts.Sub(prev.Timestamp) > 10*time.Minute
		t := m.tickFor(x, 0, 0)
		later := t == tickSent // stored and ours: View draws its tick
		if later {
			t = tickLater
		}
		k := lineKey{width: w, senderW: d.senderW, names: d.names, showName: showName, tick: t, failed: m.failed[x.MessageID],
			seq: x.SeqNo, minute: ts.Unix() / 60, updated: x.UpdatedSeq, selected: m.selected != 0 && x.SeqNo == m.selected}
		if x.ReplyTo > 0 {
			k.quote = m.quoteLine(x)
		}
		if k.selected {
			m.selLine = len(out)
		}
		c, ok := m.lineCache[x.MessageID]
		if !ok || c.key != k {
			c = cachedLines{key: k}
			c.lines, c.widths, c.tickBack = m.messageLines(x, k) // messagelines.go
			if m.lineCache == nil {
				m.lineCache = map[string]cachedLines{}
			}
			m.lineCache[x.MessageID] = c
		}
		out = append(out, c.lines...)
		widths = append(widths, c.widths...)
		for range c.lines {
			seqs = append(seqs, x.SeqNo)
		}
		if later {
			m.tickAt[len(out)-1-c.tickBack] = x.SeqNo
		}
		d.prev, d.any = x, true
	}
	return out, seqs, widths
}

// composerShown is the composer's drawing, its lines and their widths, and
// the revision they were drawn at (composer.rev).
type composerShown struct {
	rev    int
	drawn  bool
	lines  []string
	widths []int
}

// composerLines is the composer's rows and their widths in cells, drawn
// again only when something it shows changed: it was a third of a frame's
// time while messages poured in.
func (m chatModel) composerLines() ([]string, []int) {
	c := m.composerShown
	if c != nil && c.drawn && c.rev == m.compose.rev {
		return c.lines, c.widths
	}
	lines, widths := m.compose.viewLines()
	if c != nil {
		c.rev, c.drawn, c.lines, c.widths = m.compose.rev, true, lines, widths
	}
	return lines, widths
}

// tickWidth is the width of every tick glyph (chatModel.tickGlyph).
const tickWidth = 2

// fitLines is fitBlock for lines whose widths are known (-1: measure it
// here): exactly h lines of exactly w cells, without measuring again what
// was measured when it was drawn.
func fitLines(lines []string, widths []int, w, h int) []string {
	out := make([]string, h)
	for i := range min(len(lines), h) {
		l, lw := lines[i], widths[i]
		if lw < 0 {
			lw = ansi.StringWidth(l)
		}
		switch {
		case lw > w:
			l = ansi.Truncate(l, w, "")
		case lw < w:
			l += strings.Repeat(" ", w-lw)
		}
		out[i] = l
	}
	if len(lines) < h {
		pad := strings.Repeat(" ", w)
		for i := len(lines); i < h; i++ {
			out[i] = pad
		}
	}
	return out
}

// partsShown is the sidebar and the status line as last drawn and the key of
// what each was drawn from. Each View used to draw both again, the sidebar's
// rows through lipgloss and every line measured by fitBlock, though a message
// in the open chat changes neither (or one row's unread count): now a View
// builds the keys, which is cheap, and draws a part only when its key moved.
type partsShown struct {
	scratch      []byte // the key being built, swapped with the one kept
	sidebarKey   []byte
	sidebarLines []string
	sidebarDraws int // drawings, for the tests

	statusKey   []byte
	status      string
	statusDraws int

	// frameBuf is where a frame is assembled; frame is the last one handed
	// out. View runs after every Update, and most Updates (a read report
	// answered, an ack, a peer's boundary off screen) change nothing shown:
	// such a frame is the same string again, with nothing allocated, and the
	// renderer's comparison with the last frame ends at the pointer.
	frameBuf []byte
	frame    string
}

// keepFrame returns the frame assembled in buf: the last one when it reads
// the same, else a new string of it.
func (p *partsShown) keepFrame(buf []byte) string {
	p.frameBuf = buf
	if p.frame != "" && string(buf) == p.frame {
		return p.frame
	}
	p.frame = string(buf)
	return p.frame
}

// sidebarLines is the conversation list beside the chat, exactly h lines of
// sidebarWidth cells, drawn again only when what its rows show changed:
// compactRow's inputs for the rows on screen, the title's unread count, the
// size, selection, scroll and styles.
func (m Model) sidebarLines(h int) []string {
	p := &m.c.parts
	in := &m.inbox
	k := p.scratch[:0]
	_, unread := in.totalUnread() // as the title shows it: muted chats out, capped
	k = fmt.Appendf(k, "%p|%s|%d|%d|%d|%d|%t|%d|%s|%d|", m.c.styles, m.c.me, sidebarWidth, h, in.width, in.height,
		in.loaded, len(in.entries), unread, m.c.names.dir.Version())
	if in.err != nil && len(in.entries) == 0 {
		k = append(k, errText(in.err)...)
	}
	rows := in.visibleRows()
	for i := in.top; i < len(in.entries) && i < in.top+rows; i++ {
		e := &in.entries[i]
		k = fmt.Appendf(k, "\x00%s|%s|%s|%s|%d|%t", e.Type, e.ConversationID, e.Name, e.Peer, e.Unread, i == in.cursor)
	}
	if p.sidebarLines != nil && string(k) == string(p.sidebarKey) {
		p.scratch = k
		return p.sidebarLines
	}
	p.scratch, p.sidebarKey = p.sidebarKey, k
	p.sidebarLines = strings.Split(fitBlock(in.View(), sidebarWidth, h), "\n")
	p.sidebarDraws++
	return p.sidebarLines
}

// statusShown is the status line, drawn again only when its text, the
// connection state, the width or the styles changed.
func (m Model) statusShown() string {
	p := &m.c.parts
	k := p.scratch[:0]
	secs := 0
	if m.conn.Status == client.Reconnecting {
		secs = int(m.conn.RetryAt.Sub(m.c.now()).Round(time.Second) / time.Second)
	}
	right := m.flash
	if right == "" {
		right = m.hints()
	}
	k = fmt.Appendf(k, "%p|%d|%d|%s|%d|%d|%d|%t|%s", m.c.styles, m.width, m.page, m.c.me, m.conn.Status, m.conn.Unsent, secs,
		m.flashErr, right)
	if p.status != "" && string(k) == string(p.statusKey) {
		p.scratch = k
		return p.status
	}
	p.scratch, p.statusKey = p.statusKey, k
	p.status = m.statusLine()
	p.statusDraws++
	return p.status
}
