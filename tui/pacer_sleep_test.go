package tui

import (
	"testing"
	"time"
)

// TestOnSleepRunsWhenThePacerSleeps: what OnSleep sets runs when the pacer
// slows the ticker, once each time, and not while Views keep coming.
func TestOnSleepRunsWhenThePacerSleeps(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour
	slept := make(chan struct{}, 8)
	f.OnSleep(func() { slept <- struct{}{} })
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	select {
	case <-slept:
	case <-time.After(20 * time.Second):
		t.Fatal("OnSleep did not run when the pacer slowed the ticker")
	}
	if !f.isAsleep() {
		t.Fatal("OnSleep ran while the pacer was awake")
	}
	p.Send(pacedText("woken up"))
	eventually(t, "the frame after the idle drawn", func() bool { return out.contains("woken up") })
	select {
	case <-slept:
	case <-time.After(20 * time.Second):
		t.Fatal("OnSleep did not run when the pacer slept again")
	}
}
