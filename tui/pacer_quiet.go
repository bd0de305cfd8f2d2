package tui

import "time"

// While a stream runs the renderer ticks every streamFrame, slower than the
// full rate: every tick then finds a new frame, and Bubble Tea's renderer
// parses and diffs the whole screen for each (with the conversation list
// beside the chat a new line shifts every row of the pane, so the diff
// rewrites all of them), which was two fifths of a steady message's CPU.
// What must not wait for the slow tick is a stream's last message, which a
// person looks for: when no View has come for streamQuiet, longer than the
// gap between the session's held batches (client/hold.go: 30 ms), the stream
// has paused, and the pacer draws at once (drawNow) and returns to the tick
// it had. So the last message of a stream is on screen within its hold,
// streamQuiet and the work, as it was within the hold and the 40 ms tick
// before; the frames between come at streamFrame.
//
// Since session 23 the session says when its stream pauses, 15 ms after a
// batch with nothing behind it (client/streampause.go, sessionPaused), and
// holds a long stream's batches 60 ms (client/hold.go): Views then come
// 60–70 ms apart, and a quiet timer under that would draw a pause between
// every two. streamQuiet is the fallback for a pause the session's event
// did not tell (dropped while the UI was behind), past the long hold's gap.
const (
	pacerStreamQuiet = 90 * time.Millisecond
	// pacerDrawSettle is how long the ticker runs at soonFrame (pacer_start.go)
	// for the frame drawn at a pause, after which it goes back to its period:
	// a few empty ticks (no new View: the renderer compares and returns) are
	// the pause's whole cost.
	pacerDrawSettle = 4 * time.Millisecond
)

// streamViewed is viewed's part during a stream: the pause timer starts
// again with every View, so it fires only after the stream's last.
// Called with f.mu held.
func (f *FramePacer) streamViewed() {
	if f.quiet == nil {
		f.quiet = time.AfterFunc(f.streamQuiet, f.streamPaused)
		return
	}
	f.quiet.Reset(f.streamQuiet)
}

// sessionPaused is the session's word that the stream of messages paused
// (client.StreamPausedEvent, 15 ms after a batch with nothing behind it),
// drawn as a pause the pacer saw itself. Called from Live.View once the
// View after the event is decided (drawn, withheld, or the last one when
// the event came alone), so that a View withheld there is what the pause
// draws: the frame is asked for on a goroutine of its own, as the quiet
// timer's callback runs, since asking sends to the program whose event
// loop is the caller.
func (f *FramePacer) sessionPaused() {
	if f == nil {
		return
	}
	go f.streamPaused()
}

// streamPaused draws the stream's last frame at once: the View already
// made if it was drawn, or a new one asked for if it was withheld
// (pacer_withhold.go), which is drawn at once when it comes.
func (f *FramePacer) streamPaused() {
	f.mu.Lock()
	if !f.streaming || f.asleep || f.stopped {
		f.mu.Unlock()
		return
	}
	f.pauses++
	if f.stale {
		ask := f.askFrame(true)
		f.mu.Unlock()
		ask()
		return
	}
	f.drawSoon()
	f.mu.Unlock()
}

// drawSoon has the renderer draw within soonFrame, then go back to its
// period. Called with f.mu held.
func (f *FramePacer) drawSoon() {
	f.soons++
	f.reset(soonFrame)
	if f.settle == nil {
		f.settle = time.AfterFunc(pacerDrawSettle, f.settled)
		return
	}
	f.settle.Reset(pacerDrawSettle)
}

// settled puts the ticker back to the period the stream's state calls for,
// after the frame drawn at a pause.
func (f *FramePacer) settled() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.period != soonFrame {
		return // a View, a key or the idle check has set it since
	}
	switch {
	case f.asleep:
		f.reset(f.sleep)
	case f.streaming:
		f.reset(f.streamFrame)
	default:
		f.reset(f.frame)
	}
}
