package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/wire"
)

// The history window: a chat holds a bounded run of its messages, not all
// that was scrolled through. g, and opening at the first unread, load the one
// page wanted in place of the window (the cache reads a page below any seq_no
// as fast as the newest), rather than every page between it and the newest:
// g over a 52k conversation read 1,000 pages for 74 s, and opening at 5,000
// unread read 100. Scrolling down from there loads the pages below, as
// scrolling up loads those above; past maxWindow messages the far end is
// dropped (with its drawings), so memory stays the same however far one
// scrolls. While the window stops short of the newest message (behind), new
// messages are counted ("↓ N new"), not added: G loads the newest page.

// maxWindow bounds the messages a chat keeps loaded (20 pages of 50); a
// live chat at the bottom trims the oldest windowSlack at a time, so a burst
// redraws the history once per windowSlack messages, not for each.
const (
	maxWindow   = 1000
	windowSlack = 250
)

// unreadContext is how many messages above the first unread the page opened
// there starts with, to show what the unread messages answer.
const unreadContext = 5

// loadAt replaces the window with the page that starts at seq (1: the first
// message), or with the newest page when that covers it.
func (m *chatModel) loadAt(seq int64) tea.Cmd {
	page := int64(max(m.c.page, 1))
	seq = max(seq, 1)
	before := seq + page
	if before > m.lastSeq {
		before = 0
	}
	m.windowGen++
	m.loadingOlder, m.loadingNewer = false, false // answers to the old window are dropped
	c, id, gen := m.c, m.conv.ConversationID, m.windowGen
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		p, err := c.be.History(ctx, id, before, c.page)
		return historyMsg{conv: id, before: before, page: p, err: err, fresh: true, gen: gen}
	}
}

// loadNewer asks for the page below the window while it is behind.
func (m *chatModel) loadNewer() tea.Cmd {
	if !m.behind || m.loadingNewer || !m.loaded || len(m.msgs) == 0 || m.loadErr != nil {
		return nil
	}
	page := int64(max(m.c.page, 1))
	before := m.msgs[len(m.msgs)-1].SeqNo + page + 1
	if before > m.lastSeq {
		before = 0 // the newest page, with what is still sending
	}
	m.loadingNewer = true
	c, id, gen := m.c, m.conv.ConversationID, m.windowGen
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		p, err := c.be.History(ctx, id, before, c.page)
		return historyMsg{conv: id, before: before, page: p, err: err, below: true, gen: gen}
	}
}

// maybeLoadNewer asks for the page below when the reader nears the bottom of
// a window that is behind.
func (m *chatModel) maybeLoadNewer() tea.Cmd {
	if !m.behind || m.offset > m.historyHeight() {
		return nil
	}
	return m.loadNewer()
}

// startWindow empties the window for a page that replaces it.
func (m *chatModel) startWindow(msg historyMsg) {
	for _, x := range m.msgs {
		delete(m.lineCache, x.MessageID)
	}
	m.msgs, m.offset, m.newHere = nil, 0, 0
	m.msgsVersion++
	if msg.before == 0 {
		m.pending = nil // the newest page brings them again
	}
	m.behind = msg.before != 0 && !m.reaches(msg.page.Messages)
}

// reaches reports whether page (oldest first) holds the newest message known.
func (m *chatModel) reaches(page []wire.Message) bool {
	return len(page) > 0 && page[len(page)-1].SeqNo >= m.lastSeq
}

// pageBelow adds a page loaded below the window, keeping the reader's place.
func (m *chatModel) pageBelow(msg historyMsg) tea.Cmd {
	m.loadingNewer = false
	if msg.err != nil {
		m.c.log.Error("load newer history", "conv", msg.conv, "before", msg.before, "err", msg.err)
		return flash("history: "+errText(msg.err), true)
	}
	anchor := m.bottomSeq()
	if p := msg.page.Messages; len(p) > 0 && len(m.msgs) > 0 && p[0].SeqNo > m.msgs[len(m.msgs)-1].SeqNo+1 {
		// Not the page right below (the newest moved on by more than a page
		// meanwhile): it starts a window of its own.
		m.startWindow(msg)
		m.more = msg.page.More
		anchor = 0
	}
	if msg.before == 0 {
		m.behind = false
		m.stale = msg.page.Stale
		for _, p := range msg.page.Pending {
			m.addPending(p)
		}
		for id, reason := range msg.page.Refused {
			m.failed[id] = reason
		}
	} else if m.reaches(msg.page.Messages) {
		m.behind = false
	}
	m.merge(msg.page.Messages)
	m.trimOldest(maxWindow)
	m.render()
	m.keepBottom(anchor)
	return tea.Batch(m.maybeLoadNewer(), m.maybeMarkRead())
}

// heardNewer takes a live message while the window is behind: it is not
// added (it would leave a gap), only counted.
func (m *chatModel) heardNewer(x wire.Message) {
	m.lastSeq = max(m.lastSeq, x.SeqNo)
	if x.SenderID != m.c.me && visible(x) {
		m.newHere++
	}
}

// trimOldest drops the oldest messages past limit, and their drawings.
func (m *chatModel) trimOldest(limit int) {
	n := len(m.msgs) - limit
	if n <= 0 {
		return
	}
	for _, x := range m.msgs[:n] {
		delete(m.lineCache, x.MessageID)
	}
	// Room for the slack a live chat grows by before the next trim, and as
	// much again for the commit that takes it past the slack: a slice cut
	// to its length was copied again by the next message's append (a tenth
	// of the CPU of a burst into a chat not on screen), and one with room
	// for the slack alone by the message that triggers the next trim.
	m.msgs = append(make([]wire.Message, 0, limit+2*windowSlack), m.msgs[n:]...)
	m.more = true
	m.msgsVersion++
}

// trimNewest drops the newest messages past limit, and their drawings: the
// window is then behind.
func (m *chatModel) trimNewest(limit int) {
	if len(m.msgs) <= limit {
		return
	}
	for _, x := range m.msgs[limit:] {
		delete(m.lineCache, x.MessageID)
	}
	m.msgs = append([]wire.Message(nil), m.msgs[:limit]...)
	m.behind = true
	m.msgsVersion++
}

// bottomSeq is the seq_no of the message on the bottom line of the screen
// (0: none), to keep there when lines come or go below or above it.
func (m *chatModel) bottomSeq() int64 {
	for i := len(m.lineSeq) - 1 - m.offset; i >= 0 && i < len(m.lineSeq); i-- {
		if s := m.lineSeq[i]; s != 0 {
			return s
		}
	}
	return 0
}

// keepBottom scrolls so that the message seq ends on the bottom line again
// (0: leaves the offset as it is).
func (m *chatModel) keepBottom(seq int64) {
	if seq == 0 {
		return
	}
	for i := len(m.lineSeq) - 1; i >= 0; i-- {
		if m.lineSeq[i] == seq {
			m.offset = len(m.lineSeq) - 1 - i
			m.afterLayoutChange()
			return
		}
	}
}

// trimLive keeps a chat at the bottom from growing without bound as
// messages arrive: past maxWindow+windowSlack the oldest go.
func (m *chatModel) trimLive() {
	if len(m.msgs) > maxWindow+windowSlack && m.offset == 0 {
		m.trimOldest(maxWindow)
		m.render()
	}
}
