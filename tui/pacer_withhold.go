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
// tick compares and returns) and the pacer asks for a frame instead: it sends
// the program a frameDueMsg frameLead before the renderer's next tick (the
// pacer set the ticker, so it knows when that is), and the View after it is
// drawn and flushed by that tick. So a frame during a stream is about as new
// as before, for two more wake-ups a frame (the ask and the loop taking it);
// a stream's end is drawn as before: its pause (pacer_quiet.go) and its end
// at the idle check ask for the withheld View to be put on the screen at
// once (drawSoon), not at the next tick. Keys, pastes, wheel turns and resizes end a stream
// (keyed), so what the user does is drawn View by View at the full rate.

// pacerFrameLead is how long before the renderer's tick the pacer asks for
// the frame: time for the program's loop to take the ask and build the View
// on a loaded machine. A View built after the tick is drawn at the one after.
const pacerFrameLead = 10 * time.Millisecond

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
		wait := f.untilAsk(time.Now())
		if f.frameNext == nil {
			f.frameNext = time.AfterFunc(wait, f.frameDue)
		} else {
			f.frameNext.Reset(wait)
		}
		f.frameSet = true
	}
	return true
}

// untilAsk is how long from now to ask for the frame the renderer's next
// tick draws: frameLead before it, or before the one after if that is
// already too close. Called with f.mu held.
func (f *FramePacer) untilAsk(now time.Time) time.Duration {
	period := f.period
	if period <= 0 {
		period = f.streamFrame
	}
	toTick := period - now.Sub(f.tickedAt)%period
	wait := toTick - pacerFrameLead
	for wait < 0 {
		wait += period
	}
	return wait
}

// frameDue asks for the stream's next frame, for the renderer's tick; if the
// stream has ended meanwhile, for the screen at once.
func (f *FramePacer) frameDue() {
	f.mu.Lock()
	f.frameSet = false
	ask := f.askFrame(!f.streaming || f.asleep)
	f.mu.Unlock()
	ask()
}

// askFrame, with f.mu held, returns what sends the program a frameDueMsg if
// a View was withheld; the caller runs it once the lock is let go (the
// program's loop takes the lock in View, and Send waits for the loop). now:
// the View it brings is put on the screen at once, not at the next tick.
func (f *FramePacer) askFrame(now bool) func() {
	if !f.stale || f.prog == nil || f.stopped {
		return noFrame
	}
	if f.due { // asked already: the View it brings serves this ask too
		f.dueNow = f.dueNow || now
		return noFrame
	}
	f.due, f.dueNow = true, now
	p := f.prog
	return func() { p.Send(frameDueMsg{}) }
}

// drawnView notes a View that is drawn, with f.mu held, and reports whether
// it is the one the pacer asked for.
func (f *FramePacer) drawnView() (asked bool) {
	asked, now := f.due, f.dueNow
	f.due, f.dueNow, f.stale = false, false, false
	f.drawn++
	if now && f.prog != nil {
		// Not drawn yet: Bubble Tea hands the renderer this View after
		// View returns, and a renderer busy with the last frame (or an event
		// loop held up) can take longer than the short ticks last, which
		// would leave the View to the stream's slow tick, or the sleeping
		// one. The short ticks start once the event loop has moved on to
		// the next message, when the View is the renderer's.
		p := f.prog
		go p.Send(frameHandedMsg{})
	}
	return asked
}

// frameHandedMsg tells the pacer, from the event loop, that the View asked
// for at once is the renderer's now: Bubble Tea handed it over before it
// took this message.
type frameHandedMsg struct{}

// handed starts the short ticks that draw the View asked for at once.
func (f *FramePacer) handed() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped || f.ticker == nil {
		return
	}
	f.drawSoon()
}

// View draws the kept model, or during a stream gives back the View drawn
// last when the renderer would not draw this one (pacer_withhold.go).
func (l *Live) View() tea.View {
	if l.paused {
		// After the View's fate is decided, so that a View withheld here is
		// the one the pause asks for (pacer_quiet.go).
		l.paused = false
		defer l.m.c.pacer.sessionPaused()
	}
	if l.same && l.shown {
		l.same = false
		return l.last // nothing changed: not a View for the stream's count
	}
	l.same = false
	if l.shown && l.m.c.pacer.withhold() {
		return l.last
	}
	l.last, l.shown = l.m.View(), true
	return l.last
}
