package tui

import (
	"testing"
	"time"
)

// The short ticks that draw a View asked for at once start only once Bubble
// Tea has handed that View to the renderer, which it does after View returns
// (and a renderer busy with the last frame holds it up): started from inside
// View, they could end before the renderer had the View, leaving it to the
// stream's slow tick or the sleeping one (TestStreamWithholdsViews failed so
// under -race on a loaded CI machine).
func TestFrameAskedAtOnceTicksOnceHanded(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep, f.streamFrame = time.Hour, time.Hour
	_, out := pacedChat(t, f)
	eventually(t, "the chat drawn", func() bool { return out.contains("bob") })

	f.mu.Lock()
	f.due, f.dueNow = true, true // a frame asked for at once
	soons := f.soons
	f.drawnView() // what View does with it
	inView := f.soons - soons
	f.mu.Unlock()
	if inView != 0 {
		t.Fatalf("the short ticks started inside View (%d), before Bubble Tea handed the View to the renderer", inView)
	}
	eventually(t, "the short ticks once the View is handed", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.soons > soons
	})
}
