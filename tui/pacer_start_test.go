package tui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestFrameSoonDrawsWithoutWaitingForTheTick: with the pacer's frame an
// hour (so after Settle no tick comes while the test runs), a change is
// drawn only when FrameSoon asks for it, and Settle stops the fast ticks
// again.
func TestFrameSoonDrawsWithoutWaitingForTheTick(t *testing.T) {
	f := NewFramePacer(30)
	f.frame, f.sleep, f.idleAfter = time.Hour, time.Hour, time.Hour
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
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
	defer func() {
		cancel()
		<-done
	}()
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })

	f.Settle() // the ticker at the pacer's frame: an hour
	p.Send(pacedText("after settle"))
	time.Sleep(300 * time.Millisecond) // 9 frames at the program's 30 a second
	if out.contains("after settle") {
		t.Fatal("drawn although the ticker was settled at an hour")
	}

	f.FrameSoon()
	eventually(t, "the frame FrameSoon asked for drawn", func() bool { return out.contains("after settle") })

	f.Settle()
	p.Send(pacedText("after the second settle"))
	time.Sleep(300 * time.Millisecond) // 300 ticks at soonFrame
	if out.contains("after the second settle") {
		t.Fatal("the ticker still runs at soonFrame after Settle")
	}
}
