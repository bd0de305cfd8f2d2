package tui

import "time"

// The first frame of the TUI waits for the renderer's next tick after the
// View that holds the inbox: at 30 frames a second up to 33 ms (16 on
// average) added to every start (docs/tui.md "Time to a painted inbox").
// FrameSoon has the ticker fire within soonFrame instead, and Settle puts
// it back to the frame rate once that frame is drawn. Starting the whole
// program at a higher frame rate would not do: its first tick would draw
// the inbox still empty, before the cache's answer, and the inbox a few ms
// later.

// soonFrame is the ticker's period between FrameSoon and Settle: a frame
// with nothing new costs the renderer one comparison of the view with the
// last one drawn.
const soonFrame = time.Millisecond

// FrameSoon has the renderer look for a new frame within soonFrame, and
// every soonFrame until Settle. It does nothing before the first View (no
// ticker yet).
func (f *FramePacer) FrameSoon() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticker == nil {
		return
	}
	f.tick(soonFrame)
}

// Settle puts the renderer's ticker back to the frame rate after
// FrameSoon, or to the idle rate if the pacer is asleep.
func (f *FramePacer) Settle() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticker == nil {
		return
	}
	if f.asleep {
		f.tick(f.sleep)
		return
	}
	f.tick(f.frame)
}
