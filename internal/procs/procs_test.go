package procs

import (
	"runtime"
	"testing"
	"time"
)

func testOptions(maxProcs int) Options {
	return Options{Max: maxProcs, Waiting: 16, Light: 2, FirstProbe: 30 * time.Second, MaxProbe: 2 * time.Minute}.withDefaults()
}

const (
	calm     = 1.0  // ready goroutines per processor in a window: light
	moderate = 8.0  // neither congested nor light
	busy     = 50.0 // well past Waiting
)

const window = 50 * time.Millisecond

// run feeds o.step windows of the given means from s at now, and returns
// the state and time after them.
func (o Options) run1(s state, now time.Time, means ...float64) (state, time.Time) {
	for _, m := range means {
		now = now.Add(window)
		s = o.step(s, m, now)
	}
	return s, now
}

func TestStaysAtOneWhileNothingWaits(t *testing.T) {
	o := testOptions(2)
	s, now := state{procs: 1}, time.Unix(0, 0)
	for i := range 2000 {
		m := calm
		if i%3 == 0 {
			m = busy // a burst alone, never two windows in a row
		}
		if s, now = o.run1(s, now, m); s.procs != 1 {
			t.Fatalf("window %d: %d processors without two congested windows in a row", i, s.procs)
		}
	}
}

func TestDoublesUpToMaxWhenGoroutinesKeepWaiting(t *testing.T) {
	o := testOptions(8)
	s, now := state{procs: 1}, time.Unix(0, 0)
	for _, want := range []int{2, 4, 8, 8} {
		if s, now = o.run1(s, now, busy, busy); s.procs != want {
			t.Fatalf("after two congested windows: %d processors, want %d", s.procs, want)
		}
		if s.probing {
			t.Fatal("a step up is not a probe")
		}
	}
	if got := s.nextProbe.Sub(now); got < 0 || got > o.FirstProbe {
		t.Fatalf("next probe %v from now, want within %v", got, o.FirstProbe)
	}
}

func TestTriesFewerAfterTheWaitAndKeepsThemWhenCalm(t *testing.T) {
	o := testOptions(2)
	s, now := o.run1(state{procs: 1}, time.Unix(0, 0), busy, busy)
	if s.procs != 2 {
		t.Fatalf("%d processors after congestion, want 2", s.procs)
	}
	probeAt := s.nextProbe
	// Calm until just before the wait is over: no probe.
	for now.Add(window).Before(probeAt) {
		if s, now = o.run1(s, now, calm); s.procs != 2 || s.probing {
			t.Fatalf("probed %v before the wait was over: %+v", probeAt.Sub(now), s)
		}
	}
	// Congested when the wait is over: no probe either.
	if s2, _ := o.run1(s, probeAt.Add(-window), busy); s2.procs != 2 || s2.probing {
		t.Fatalf("probed while congested: %+v", s2)
	}
	if s, now = o.run1(s, now, calm); s.procs != 1 || !s.probing {
		t.Fatalf("no probe once the wait was over: %+v", s)
	}
	// Calm windows at one processor: it stays.
	if s, now = o.run1(s, now, calm, busy, calm, calm, calm); s.procs != 1 || s.probing {
		t.Fatalf("a calm probe was not kept: %+v", s)
	}
	if s, _ = o.run1(s, now, calm, calm, calm); s.procs != 1 {
		t.Fatalf("%d processors after the probe was kept", s.procs)
	}
}

func TestFailedProbesBackOff(t *testing.T) {
	o := testOptions(2)
	s, now := o.run1(state{procs: 1}, time.Unix(0, 0), busy, busy)
	var waits []time.Duration
	for range 5 {
		s, now = o.run1(s, s.nextProbe.Add(-window), calm) // the wait is over: probe
		if !s.probing || s.procs != 1 {
			t.Fatalf("no probe at %v: %+v", now, s)
		}
		if s, now = o.run1(s, now, busy, busy); s.procs != 2 || s.probing {
			t.Fatalf("a congested probe was kept: %+v", s)
		}
		waits = append(waits, s.nextProbe.Sub(now))
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 2 * time.Minute, 2 * time.Minute, 2 * time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits after failed probes %v, want %v", waits, want)
		}
	}
	// A probe that holds resets the wait.
	s, now = o.run1(s, s.nextProbe.Add(-window), calm, calm, calm, calm, calm)
	if s.procs != 1 || s.probing {
		t.Fatalf("probe not kept: %+v", s)
	}
	s, now = o.run1(s, now, busy, busy)
	if got := s.nextProbe.Sub(now); got != o.FirstProbe {
		t.Fatalf("after a kept probe and new congestion the wait is %v, want %v", got, o.FirstProbe)
	}
}

func TestOneProcessorMachineIsLeftAlone(t *testing.T) {
	o := testOptions(1)
	if s, _ := o.run1(state{procs: 1}, time.Unix(0, 0), busy, busy, busy); s.procs != 1 {
		t.Fatalf("%d processors on a machine of one", s.procs)
	}
	before := runtime.GOMAXPROCS(0)
	stop := Adapt(Options{Max: 1})
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("Adapt with Max 1 changed GOMAXPROCS from %d to %d", before, got)
	}
	stop()
}

func TestAnOperatorsGOMAXPROCSStands(t *testing.T) {
	t.Setenv("GOMAXPROCS", "2")
	before := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(before)
	stop := Adapt(Options{Max: 2})
	defer stop()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("Adapt changed GOMAXPROCS to %d with GOMAXPROCS=2 in the environment", got)
	}
}

// Adapt starts at one processor, adds one when goroutines keep waiting, and
// puts back what it found when stopped; a second Adapt while one runs changes
// nothing.
func TestAdaptFollowsTheRunQueue(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // an operator's count would make Adapt stand aside
	before := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(before)
	stop := Adapt(Options{Max: 2, Sample: time.Millisecond, Window: 5, FirstProbe: time.Hour})
	defer stop()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d after Adapt, want 1", got)
	}
	second := Adapt(Options{Max: 2})
	second()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("a second Adapt's stop changed GOMAXPROCS to %d", got)
	}
	// Many goroutines that never block keep the run queue long.
	quit := make(chan struct{})
	for range 64 {
		go func() {
			for {
				select {
				case <-quit:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.GOMAXPROCS(0) != 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(quit)
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("GOMAXPROCS %d with 64 goroutines always ready, want 2", got)
	}
	stop()
	stop() // twice is harmless
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("GOMAXPROCS %d after stop, want the 2 it found", got)
	}
}

// A load between light and congested keeps the count where it is: no step
// up, and no try at fewer that would likely fail.
func TestModerateLoadKeepsTheCount(t *testing.T) {
	o := testOptions(2)
	s, now := o.run1(state{procs: 1}, time.Unix(0, 0), busy, busy)
	for range 10000 {
		if s, now = o.run1(s, now, moderate); s.procs != 2 || s.probing {
			t.Fatalf("moderate load at two processors changed them: %+v", s)
		}
	}
	s, now = o.run1(s, now, calm) // light: now it tries one
	if s.procs != 1 || !s.probing {
		t.Fatalf("light load after the wait did not try one processor: %+v", s)
	}
	for range 10000 {
		if s, now = o.run1(s, now, moderate); s.procs != 1 {
			t.Fatalf("moderate load at one processor changed it: %+v", s)
		}
	}
}
