package tui

import (
	"testing"
	"time"
)

// idleWindow runs the pacer's idle check on a window that saw views Views
// and keys keys, as the check's timer would, and returns the ticker's period
// and whether a stream runs after it.
func (f *FramePacer) idleWindow(views, keys int) (time.Duration, bool) {
	f.mu.Lock()
	f.views, f.keys = views, keys
	ask := f.idleCheckLocked()
	period, streaming := f.period, f.streaming
	f.mu.Unlock()
	ask()
	return period, streaming
}

// newCheckedPacer is a pacer with a ticker and an idle check of its own, not
// a program's: the test calls the check, so nothing here depends on timing.
func newCheckedPacer(t *testing.T) *FramePacer {
	f := NewFramePacer(30)
	f.ticker = time.NewTicker(time.Hour)
	f.check = time.AfterFunc(time.Hour, func() {})
	f.armed = true
	t.Cleanup(func() {
		f.ticker.Stop()
		f.check.Stop()
	})
	return f
}

// TestStreamOutlastsAThinWindow: a steady stream's windows hover around
// streamViews (200 msgs/s brings some 33 Views a second against 32), and one
// a View short must not end it and draw every View at the full rate for a
// window; a window under streamKeep does, a window with a key does (typing is
// never slowed), and a window with none puts the pacer to sleep. Starting a
// stream still takes streamViews.
func TestStreamOutlastsAThinWindow(t *testing.T) {
	f := newCheckedPacer(t)
	if f.streamKeep <= 0 || f.streamKeep >= f.streamViews {
		t.Fatalf("streamKeep %d is not between 0 and streamViews %d", f.streamKeep, f.streamViews)
	}

	if _, streaming := f.idleWindow(f.streamViews-1, 0); streaming {
		t.Fatalf("a stream started on %d Views, under streamViews %d", f.streamViews-1, f.streamViews)
	}
	if period, streaming := f.idleWindow(f.streamViews, 0); !streaming || period != f.streamFrame {
		t.Fatalf("after a window of streamViews: streaming %v at %v, want a stream at %v", streaming, period, f.streamFrame)
	}
	for views := f.streamViews - 1; views >= f.streamKeep; views-- {
		if period, streaming := f.idleWindow(views, 0); !streaming || period != f.streamFrame {
			t.Fatalf("a window of %d Views (streamKeep %d) ended the stream: streaming %v at %v",
				views, f.streamKeep, streaming, period)
		}
	}
	if _, _, streams := f.pacerState(); streams != 1 {
		t.Fatalf("the stream started %d times, want once", streams)
	}

	if period, streaming := f.idleWindow(f.streamKeep-1, 0); streaming || period != f.frame {
		t.Fatalf("a window under streamKeep left streaming %v at %v, want the full rate %v", streaming, period, f.frame)
	}

	f.idleWindow(f.streamViews, 0)
	if period, streaming := f.idleWindow(f.streamViews, 1); streaming || period != f.frame {
		t.Fatalf("a window with a key left streaming %v at %v, want the full rate %v", streaming, period, f.frame)
	}

	f.idleWindow(f.streamViews, 0)
	if period, streaming := f.idleWindow(0, 0); streaming || period != f.sleep || !f.isAsleep() {
		t.Fatalf("a window with no View left streaming %v at %v, want asleep at %v", streaming, period, f.sleep)
	}
}
