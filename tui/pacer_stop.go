package tui

import "time"

// Bubble Tea stops its renderer's ticker when the program ends, but the
// pacer's timers (the idle check, the stream's pause and frame, the settle
// after a frame drawn at once) may still be armed, and each of them resets
// the ticker when it fires: a stopped ticker started again, ticking into a
// program that is gone (and the last frame asked for). Stop ends them.

// Stop ends the pacer: its timers are stopped and nothing it does later
// touches the ticker or the program. Call it once the program's Run has
// returned.
func (f *FramePacer) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	for _, t := range []*time.Timer{f.check, f.quiet, f.settle, f.frameNext} {
		if t != nil {
			t.Stop()
		}
	}
	f.armed, f.frameSet = false, false
	// A timer that fired between the renderer's end and this call may have
	// started the ticker again: stop it too (Bubble Tea is done with it).
	if f.ticker != nil {
		f.ticker.Stop()
	}
}
