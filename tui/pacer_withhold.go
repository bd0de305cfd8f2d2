package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Bubble Tea calls View after every Update, but during a stream the renderer
// draws only every streamFrame (pacer.go): at 200 msgs/s some 33 Views a
// second, of which 10 reach the screen. The others were the whole frame
// built for nothing — the chat's lines fitted, the sidebar and the status
// line joined, the title formatted. During a stream Live.View now hands the
// renderer the View it drew last (equal to what the renderer holds, so its
// tick compares and returns) and the pacer asks for a frame instead: at most
// streamFrame after the last View drawn it sends the program a frameDueMsg,
// whose View is drawn and put on the screen at once (drawSoon). So a frame
// during a stream is as new as before, and a stream's end is drawn as
// before: its pause (pacer_quiet.go) and its end at the idle check ask for
// the withheld View too. Keys, pastes, wheel turns and resizes end a stream
// (keyed), so what the user does is drawn View by View at the full rate.

// frameDueMsg asks the program for a View that will be drawn: sent by the
// pacer when Views were withheld during a stream.
type frameDueMsg struct{}

// noFrame is an ask for no frame.
func noFrame() {}

// withhold is called by Live.View before it draws: true means the renderer
// will not draw this View before the next frame the pacer asks for, so the
// caller gives it the View it drew last. The View counts as one for the
// stream (a change came) and the next frame is armed.
func (f *FramePacer) withhold() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticker == nil || f.prog == nil || !f.streaming || f.asleep || f.due || f.stopped {
		return false
	}
	f.views++
	f.withheld++
	f.stale = true
	f.streamViewed()
	if !f.frameSet {
		wait := max(f.streamFrame-time.Since(f.drawnAt), 0)
		if f.frameNext == nil {
			f.frameNext = time.AfterFunc(wait, f.frameDue)
		} else {
			f.frameNext.Reset(wait)
		}
		f.frameSet = true
	}
	return true
}

// frameDue asks for the stream's next frame.
func (f *FramePacer) frameDue() {
	f.mu.Lock()
	f.frameSet = false
	ask := f.askFrame()
	f.mu.Unlock()
	ask()
}

// askFrame, with f.mu held, returns what sends the program a frameDueMsg if
// a View was withheld; the caller runs it once the lock is let go (the
// program's loop takes the lock in View, and Send waits for the loop).
func (f *FramePacer) askFrame() func() {
	if !f.stale || f.due || f.prog == nil || f.stopped {
		return noFrame
	}
	f.due = true
	p := f.prog
	return func() { p.Send(frameDueMsg{}) }
}

// drawnView notes a View that is drawn, with f.mu held, and reports whether
// it is the one the pacer asked for; that one goes to the screen at once.
func (f *FramePacer) drawnView() (asked bool) {
	asked = f.due
	f.due, f.stale = false, false
	f.drawn++
	f.drawnAt = time.Now()
	if asked {
		f.drawSoon()
	}
	return asked
}

// View draws the kept model, or during a stream gives back the View drawn
// last when the renderer would not draw this one (pacer_withhold.go).
func (l *Live) View() tea.View {
	if l.shown && l.m.c.pacer.withhold() {
		return l.last
	}
	l.last, l.shown = l.m.View(), true
	return l.last
}
