package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// frameTerm does with a View's content what Bubble Tea's renderer does with
// it at every frame of the alternate screen (cursed_renderer.go's flush):
// clear the cell buffer, draw the content into it, diff it against the
// screen as last drawn and write the difference. Driving ultraviolet itself,
// not a copy of its logic, is what lets a test or benchmark see what our
// frames make the renderer do: the bytes it writes, the cells it parses.
type frameTerm struct {
	cells uv.ScreenBuffer
	scr   *uv.TerminalRenderer
	out   countingWriter
}

// countingWriter is a terminal that counts what it is sent.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// newFrameTerm is the renderer as Bubble Tea sets it up for the alternate
// screen of chatbench's tmux (TERM=xterm-256color, no COLORTERM: 256 colours).
func newFrameTerm(width, height int) *frameTerm {
	t := &frameTerm{cells: uv.NewScreenBuffer(width, height)}
	t.scr = uv.NewTerminalRenderer(&t.out, []string{"TERM=xterm-256color"})
	t.scr.SetColorProfile(colorprofile.ANSI256)
	t.scr.SetTabStops(width)
	t.scr.SetScrollOptim(true)
	t.scr.SetFullscreen(true)
	t.scr.SetRelativeCursor(false)
	t.scr.Resize(width, height)
	t.scr.Erase()
	return t
}

// draw renders content as the next frame and returns the bytes written.
func (t *frameTerm) draw(content string) int {
	before := t.out.n
	t.cells.Clear()
	uv.NewStyledString(content).Draw(t.cells, t.cells.Bounds())
	t.scr.Render(t.cells.RenderBuffer)
	_ = t.scr.Flush()
	return t.out.n - before
}

var _ io.Writer = (*countingWriter)(nil)

// streamChat is a direct chat open at 120×40 beside the conversation list,
// as chatbench's tui-burst has it, with 300 messages loaded; next applies n
// more incoming messages as a steady stream's frame brings them.
type streamChat struct {
	tm  tea.Model
	id  string
	seq int64
}

func newStreamChat(tb testing.TB) *streamChat {
	be := fixture()
	id := wire.DirectConversationID("alice", "bob")
	be.msgs[id] = nil
	be.addMessages(id, []string{"bob"}, 300, fixtureNow.Add(-time.Minute), func(i int) string {
		return fmt.Sprintf("message %d of end-of-run-01, about as long as people type", i)
	})
	be.inbox[1].LastSeq, be.inbox[1].LastReadSeq, be.inbox[1].LastDeliveredSeq, be.inbox[1].Unread = 300, 300, 300, 0
	be.statuses[id] = []wire.MemberStatus{{UserID: "alice", LastDeliveredSeq: 300, LastReadSeq: 300}, {UserID: "bob", LastDeliveredSeq: 300, LastReadSeq: 300}}
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, PageSize: 100, Dark: true})
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	entries, _ := be.Inbox(context.Background())
	tm, _ = tm.Update(inboxLoadedMsg{entries, nil})
	tm, _ = tm.Update(openConversationMsg{entry: be.inbox[1]})
	p, err := be.History(context.Background(), id, 0, 300)
	if err != nil {
		tb.Fatal(err)
	}
	tm, _ = tm.Update(historyMsg{conv: id, page: p, gen: tm.(Model).chat.windowGen})
	return &streamChat{tm: tm, id: id, seq: 300}
}

func (s *streamChat) next(n int) string {
	for range n {
		s.seq++
		s.tm, _ = s.tm.Update(client.MessageEvent{Message: wire.Message{ConversationID: s.id, SeqNo: s.seq,
			MessageID: fmt.Sprint("tb-", s.seq), SenderID: "bob", Timestamp: fixtureNow,
			Content: fmt.Sprintf("message %d of end-of-run-01, about as long as people type", s.seq)}})
	}
	return s.tm.View().Content
}

// BenchmarkStreamFrameRenderer is the renderer's share of one frame of a
// steady stream with the chat open (200 msgs/s at 10 frames a second: 20
// new messages a frame): Bubble Tea's clear, parse and diff of the View, not
// the Updates and View that built it. Per frame. Beside the time it reports
// what the frame asks of the renderer, which does not depend on the
// machine's load: bytes/frame reaching the terminal, sgr/frame style
// sequences parsed, rows/frame that differ from the frame before (the rest
// are diffed all the same: the buffer is cleared each frame) and
// measured/frame the cells, old row and new, that are not one printable
// ASCII byte: the cells whose width ultraviolet measures again while
// diffing (lineHasDrift; before v0.0.0-20261008173134 it measured every
// cell).
func BenchmarkStreamFrameRenderer(b *testing.B) {
	s := newStreamChat(b)
	t := newFrameTerm(120, 40)
	prev := s.next(0)
	t.draw(prev)
	const perFrame = 20
	frames := make([]string, 64)
	var sgr, rows, measured int
	for i := range frames {
		frames[i] = s.next(perFrame)
		st := frameStats(prev, frames[i], 120, 40)
		sgr, rows, measured = sgr+st.sgr, rows+st.rowsChanged, measured+st.measured
		prev = frames[i]
	}
	written := 0
	i := 0
	for b.Loop() {
		written += t.draw(frames[i%len(frames)])
		i++
	}
	n := float64(len(frames))
	b.ReportMetric(float64(written)/float64(i), "bytes/frame")
	b.ReportMetric(float64(sgr)/n, "sgr/frame")
	b.ReportMetric(float64(rows)/n, "rows/frame")
	b.ReportMetric(float64(measured)/n, "measured/frame")
}

// frameWork is what one frame asks of the renderer beyond its cell count.
type frameWork struct {
	sgr         int // style sequences in the View
	rowsChanged int // rows that differ from the frame before
	measured    int // cells, old and new, not one printable ASCII byte
}

func frameStats(prev, cur string, width, height int) frameWork {
	var w frameWork
	w.sgr = strings.Count(cur, "\x1b[")
	old, next := uv.NewScreenBuffer(width, height), uv.NewScreenBuffer(width, height)
	uv.NewStyledString(prev).Draw(old, old.Bounds())
	uv.NewStyledString(cur).Draw(next, next.Bounds())
	for y := range height {
		ol, nl := old.Line(y), next.Line(y)
		if ol.String() != nl.String() {
			w.rowsChanged++
		}
		for _, l := range []uv.Line{ol, nl} {
			for x := range l {
				c := l.At(x)
				if c == nil || c.Width == 0 || c.Content == "" {
					continue
				}
				if len(c.Content) == 1 && c.Content[0] >= 0x20 && c.Content[0] < 0x7f {
					continue
				}
				w.measured++
			}
		}
	}
	return w
}

// BenchmarkStreamFrameParse is the first half of BenchmarkStreamFrameRenderer
// alone: the cell buffer cleared and the View parsed into it.
func BenchmarkStreamFrameParse(b *testing.B) {
	s := newStreamChat(b)
	_ = s.next(0)
	frames := make([]string, 64)
	for i := range frames {
		frames[i] = s.next(20)
	}
	cells := uv.NewScreenBuffer(120, 40)
	i := 0
	for b.Loop() {
		cells.Clear()
		uv.NewStyledString(frames[i%len(frames)]).Draw(cells, cells.Bounds())
		i++
	}
}
