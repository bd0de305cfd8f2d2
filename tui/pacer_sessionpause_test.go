package tui

import (
	"strconv"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
)

// The session's word that its stream paused draws the last View at once:
// the pacer's own quiet timer and the stream's tick are an hour here, so
// nothing else can draw the last message while the pacer counts a stream.
func TestSessionPauseIsDrawnAtOnce(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep, f.streamFrame, f.streamQuiet = time.Hour, time.Hour, time.Hour
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
	time.Sleep(50 * time.Millisecond)
	if out.contains("the last message") {
		t.Skip("the last message was drawn before the pause was told: the stream had ended (a loaded machine), and the test tests nothing")
	}
	f.sessionPaused()
	eventually(t, "the stream's last message drawn", func() bool { return out.contains("the last message") })
}

// A StreamPausedEvent from the session reaches the pacer through the
// TUI's Update: with a stream running it is counted as a pause.
func TestStreamPausedEventReachesThePacer(t *testing.T) {
	f := NewFramePacer(30)
	tk := time.NewTicker(time.Hour)
	defer tk.Stop()
	f.field, f.ticker = &tk, tk
	f.sleep, f.streamFrame, f.streamQuiet = time.Hour, time.Hour, time.Hour
	h := newHarnessWith(t, newFakeBackend("alice", fixtureNow), 80, 24, func(o *Options) { o.Pacer = f })
	f.mu.Lock()
	f.streaming = true
	f.mu.Unlock()
	h.send(client.StreamPausedEvent{})
	eventually(t, "the pause counted", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.pauses == 1
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.check != nil {
		f.check.Stop()
	}
}
