package tui

import tea "charm.land/bubbletea/v2"

// readMarks keeps at most one read report per conversation on its way to the
// backend. A burst into an open chat moves the seen boundary with every
// frame, and each report is a server request and a write to the cache: one
// per frame was a tenth of the CPU a burst cost. While one is out, later
// boundaries only raise want; the answer sends the highest, so the last one
// always goes and none goes twice.
type readMarks map[string]*readMark

type readMark struct {
	want int64 // the highest boundary asked for while one was out (0: none)
}

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
	c.marks[id] = &readMark{}
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		return markedReadMsg{conv: id, seq: seq, err: c.be.MarkRead(ctx, id, seq)}
	}
}

// markedRead takes a report's answer and sends what was queued behind it.
func (c *common) markedRead(msg markedReadMsg) tea.Cmd {
	out, ok := c.marks[msg.conv]
	if !ok {
		return nil
	}
	delete(c.marks, msg.conv)
	if out.want > msg.seq {
		return c.markRead(msg.conv, out.want)
	}
	return nil
}
