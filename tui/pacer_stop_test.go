package tui

import (
	"context"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestStoppedPacerLeavesTheTickerStopped: a program that ends during a
// stream leaves the pacer's timers armed (the pause, the idle check, the
// settle after a frame); once Stop has run, they are disarmed, and should
// one fire all the same it does not reset (start again) the ticker Bubble Tea
// stopped at its end.
func TestStoppedPacerLeavesTheTickerStopped(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := tea.NewProgram(pacedModel{text: "frame zero", pacer: f}, tea.WithContext(ctx), tea.WithInput(nil),
		tea.WithOutput(out), tea.WithoutSignals(), tea.WithWindowSize(40, 5), tea.WithFPS(30))
	if err := f.Attach(p); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run()
	}()
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	for i := 0; ; i++ {
		p.Send(pacedText("message " + strconv.Itoa(i)))
		time.Sleep(5 * time.Millisecond)
		if _, streaming, _ := f.pacerState(); streaming {
			break
		}
	}
	cancel() // the program ends in the middle of the stream
	<-done
	f.Stop()

	f.mu.Lock()
	resets := f.resets
	f.mu.Unlock()
	// What the timers do when they fire, and what the TUI's start does:
	// none may reset the ticker now.
	f.streamPaused()
	f.idleCheck()
	f.settled()
	f.FrameSoon()
	f.Settle()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resets != resets {
		t.Errorf("the ticker Bubble Tea stopped was reset %d times after the program ended", f.resets-resets)
	}
	for name, tm := range map[string]*time.Timer{"idle check": f.check, "pause": f.quiet, "settle": f.settle, "frame": f.frameNext} {
		if tm != nil && tm.Stop() {
			t.Errorf("the %s timer was still armed after Stop", name)
		}
	}
}
