package tui

import (
	"strconv"
	"testing"
	"time"
)

// TestStreamPauseIsDrawnAtOnce: during a stream frames wait for the slow
// tick, but when the stream pauses its last View is drawn at once, not at
// the next tick, and the ticker goes back to the stream's period after it.
// The stream's tick is an hour here, so nothing but the pause can draw the
// last message while the pacer still counts the stream.
func TestStreamPauseIsDrawnAtOnce(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep, f.streamFrame = time.Hour, time.Hour
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				p.Send(pacedText("message " + strconv.Itoa(i)))
			}
		}
	}()
	eventually(t, "the ticker at streamFrame", func() bool {
		period, streaming, _ := f.pacerState()
		return streaming && period == f.streamFrame
	})
	close(stop)
	<-done
	p.Send(pacedText("the last message"))
	eventually(t, "the stream's last message drawn", func() bool { return out.contains("the last message") })
	f.mu.Lock()
	pauses := f.pauses
	f.mu.Unlock()
	if pauses == 0 {
		t.Fatal("the last message was drawn without a pause's frame")
	}
	eventually(t, "the ticker off the pause's short period", func() bool {
		period, _, _ := f.pacerState()
		return period == f.streamFrame || period == f.sleep
	})
}
