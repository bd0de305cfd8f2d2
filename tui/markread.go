package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// readMarks keeps at most one read report per conversation on its way to the
// backend. A burst into an open chat moves the seen boundary with every
// frame, and each report is a server request and a write to the cache: one
// per frame was a tenth of the CPU a burst cost. While one is out, later
// boundaries only raise want; the answer sends the highest, so the last one
// always goes and none goes twice.
//
// After an answer the conversation rests readGap (readReportGap) before the next
// report: at a steady 200 messages a second each message came alone, and
// its report, answered before the next arrived, went on its own (a write to
// the cache and a command each, a sixth of the TUI's CPU in a group). The
// boundary seen last still goes, at most that much later; quitting sends
// what waits (Model.quit). The frames to the server are coalesced again
// below, by the session (client/reads.go: once per AckDelay): this rest
// saves the cache writes and the commands, which the session cannot.
type readMarks map[string]*readMark

type readMark struct {
	want int64 // the highest boundary asked for while one was out (0: none)
	sent int64 // the boundary of the report out or last answered
}

const readReportGap = 250 * time.Millisecond

// readRestedMsg ends a conversation's rest after a read report's answer.
type readRestedMsg struct{ conv string }

// markRead reports seq as read in conversation id, or queues it behind the
// report already out.
func (c *common) markRead(id string, seq int64) tea.Cmd {
	if c.marks == nil {
		c.marks = readMarks{}
	}
	if out, ok := c.marks[id]; ok {
		out.want = max(out.want, seq)
		return nil
	}
	c.marks[id] = &readMark{sent: seq}
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		return markedReadMsg{conv: id, seq: seq, err: c.be.MarkRead(ctx, id, seq)}
	}
}

// markedRead takes a report's answer: the conversation rests, then sends
// what was queued meanwhile (readRested).
func (c *common) markedRead(msg markedReadMsg) tea.Cmd {
	if _, ok := c.marks[msg.conv]; !ok {
		return nil
	}
	id := msg.conv
	if c.readGap <= 0 {
		return c.readRested(readRestedMsg{id})
	}
	return tea.Tick(c.readGap, func(time.Time) tea.Msg { return readRestedMsg{id} })
}

// readRested sends the highest boundary queued behind the last report.
func (c *common) readRested(msg readRestedMsg) tea.Cmd {
	out, ok := c.marks[msg.conv]
	if !ok {
		return nil
	}
	delete(c.marks, msg.conv)
	if out.want > out.sent {
		return c.markRead(msg.conv, out.want)
	}
	return nil
}

// unsentMarks is what waits behind reports out or resting, by conversation.
func (c *common) unsentMarks() map[string]int64 {
	left := map[string]int64{}
	for id, out := range c.marks {
		if out.want > out.sent {
			left[id] = out.want
		}
	}
	return left
}
