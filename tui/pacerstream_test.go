package tui

import (
	"strconv"
	"testing"
	"time"
)

// pacerState is what the pacer has set the renderer's ticker to.
func (f *FramePacer) pacerState() (period time.Duration, streaming bool, streams int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.period, f.streaming, f.streams
}

// TestStreamSlowsFrames: while Views keep coming faster than streamViews a
// window (a busy chat's messages), the renderer ticks at streamFrame, not at
// the full frame rate; when they stop the ticker sleeps, and a View after the
// quiet spell (a lone message) is drawn at the full rate again.
func TestStreamSlowsFrames(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour // nothing but a View may tick it here
	if f.streamFrame <= f.frame {
		t.Fatalf("streamFrame %v is not slower than the frame %v", f.streamFrame, f.frame)
	}
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })

	// A View every 5 ms, until the pacer calls it a stream (a window of
	// 250 ms sees dozens, against streamViews 8, however loaded the machine).
	stop := make(chan struct{})
	sent := make(chan int)
	go func() {
		i := 0
		defer func() { sent <- i }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				i++
				p.Send(pacedText("message " + strconv.Itoa(i)))
			}
		}
	}()
	eventually(t, "the ticker at streamFrame", func() bool {
		period, streaming, _ := f.pacerState()
		return streaming && period == f.streamFrame
	})
	close(stop)
	<-sent
	p.Send(pacedText("the stream is over"))
	eventually(t, "the end of the stream drawn", func() bool { return out.contains("the stream is over") })
	eventually(t, "the pacer asleep after the stream", f.isAsleep)
	if period, streaming, _ := f.pacerState(); streaming || period != f.sleep {
		t.Fatalf("after the stream the ticker is at %v (streaming %v), want asleep at %v", period, streaming, f.sleep)
	}

	p.Send(pacedText("a lone message"))
	eventually(t, "the lone message drawn", func() bool { return out.contains("a lone message") })
	if period, streaming, _ := f.pacerState(); !f.isAsleep() && (streaming || period != f.frame) {
		t.Fatalf("after a quiet spell a View set the ticker to %v (streaming %v), want the full frame %v", period, streaming, f.frame)
	}
}

// TestTypingKeepsTheFullFrameRate: Views a few to a window (keys typed, a
// message now and then) keep the renderer at the full frame rate.
func TestTypingKeepsTheFullFrameRate(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	eventually(t, "the pacer asleep after the start", f.isAsleep) // the start's Views come close together
	_, _, started := f.pacerState()
	// A key every 60 ms: four or five a window of 250 ms, against 8.
	for i := range 25 {
		p.Send(pacedText("key " + strconv.Itoa(i)))
		time.Sleep(60 * time.Millisecond)
		// The full frame, or asleep if a loaded machine drew the key and went
		// quiet before this look: never the stream's slower frame.
		if period, streaming, _ := f.pacerState(); streaming || period == f.streamFrame {
			t.Fatalf("after key %d the ticker is at %v (streaming %v), want the full frame %v", i, period, streaming, f.frame)
		}
	}
	if _, _, streams := f.pacerState(); streams != started {
		t.Fatalf("typing made %d streams, want none", streams-started)
	}
}
