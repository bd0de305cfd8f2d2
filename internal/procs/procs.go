// Package procs runs a process on as few processors (GOMAXPROCS) as its load
// needs. A Go server at moderate load spends much of its CPU waking threads:
// each goroutine made ready while a processor is idle wakes a thread to run
// it, and on a virtual machine each of those wake-ups is costly. Measured on
// the chat server (docs/benchmarks.md, session 14), one processor instead of
// two took 14–21% off the CPU per message from 10,000 messages a second up,
// at the same latency at 10,000, but held goroutines in the run queues near
// saturation. So Adapt starts at one processor, doubles the count when
// goroutines keep waiting for one, and now and then tries half as many
// again when the load looks light enough for them, waiting longer after each
// try that was too few.
//
// cgo calls and system calls run on threads of their own beside the
// processors, so one processor does not cap the process at one core (the
// chat server's SQLite commits and socket writes run beside it).
package procs

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Options tunes Adapt; the zero value is the default.
type Options struct {
	Max int // the most processors; default: GOMAXPROCS when Adapt starts
	// Every Sample the run queues are read (the goroutines ready to run and
	// waiting for a processor), and every Window samples their mean decides.
	Sample time.Duration // default 5 ms
	Window int           // default 10
	// Waiting is the mean number of ready goroutines per processor above which
	// a window counts as congested; two in a row add processors. Default 16:
	// on the chat server at one processor, 2–8 at 10,000 messages a second and
	// 100–200 at 25,000 (docs/benchmarks.md, session 14).
	Waiting float64
	// Light is the mean per processor at or below which a window may try
	// fewer processors, once FirstProbe (doubled after each try that failed)
	// has passed since the last change; default Waiting/8: on the chat server
	// at two processors, 1–2 at 10,000 messages a second, 4 at 15,000, 30 at
	// 25,000, so only loads that one processor can carry are tried on one.
	Light      float64
	FirstProbe time.Duration // after a step up, how long before fewer are tried again; default 2 s
	MaxProbe   time.Duration // the longest wait between tries after failed ones; default 5 min
	Logger     *slog.Logger  // each change, at debug level; default none
}

func (o Options) withDefaults() Options {
	if o.Max <= 0 {
		o.Max = runtime.GOMAXPROCS(0)
	}
	if o.Sample <= 0 {
		o.Sample = 5 * time.Millisecond
	}
	if o.Window <= 0 {
		o.Window = 10
	}
	if o.Waiting <= 0 {
		o.Waiting = 16
	}
	if o.Light <= 0 {
		o.Light = o.Waiting / 8
	}
	if o.FirstProbe <= 0 {
		o.FirstProbe = 2 * time.Second
	}
	if o.MaxProbe < o.FirstProbe {
		o.MaxProbe = max(5*time.Minute, o.FirstProbe)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// state is the controller between two windows.
type state struct {
	procs     int
	hot       int           // congested windows in a row
	calm      int           // calm windows since a probe began
	probing   bool          // procs was just halved to see whether fewer will do
	backoff   time.Duration // the wait before the next try after this one fails
	nextProbe time.Time     // when fewer are tried next (zero: not planned)
}

// Windows in a row that decide: two congested ones add processors (one alone
// is a burst), four calm ones keep a probe.
const (
	hotToStepUp = 2
	calmToKeep  = 4
)

// step decides the processor count after a window whose mean count of ready
// goroutines per processor was waiting.
func (o Options) step(s state, waiting float64, now time.Time) state {
	if waiting > o.Waiting {
		s.hot++
	} else {
		s.hot = 0
	}
	switch {
	case s.hot >= hotToStepUp && s.procs < o.Max:
		if s.probing {
			s.backoff = min(2*s.backoff, o.MaxProbe) // fewer did not do: wait longer before trying again
		} else {
			s.backoff = o.FirstProbe
		}
		s.procs = min(2*s.procs, o.Max)
		s.hot, s.calm, s.probing = 0, 0, false
		s.nextProbe = now.Add(s.backoff)
	case s.probing:
		if s.hot == 0 {
			s.calm++
		}
		if s.calm >= calmToKeep { // fewer will do
			s.probing, s.calm = false, 0
			s.backoff = o.FirstProbe
			s.nextProbe = now.Add(s.backoff)
		}
	case waiting <= o.Light && s.procs > 1 && !s.nextProbe.IsZero() && !now.Before(s.nextProbe):
		s.procs = max(s.procs/2, 1)
		s.probing, s.calm = true, 0
	}
	return s
}

var running atomic.Bool

// Adapt sets GOMAXPROCS to 1 and from then on by load, until stop is called,
// which puts back the count it found. One Adapt runs in a process at a time:
// a second returns a stop that does nothing, and so does Adapt when the
// GOMAXPROCS environment variable is set: that count is the operator's.
// Setting GOMAXPROCS ends the runtime's own updates of it from a container's
// CPU limit; Max defaults to the count the runtime had chosen when Adapt
// starts.
func Adapt(opts Options) (stop func()) {
	o := opts.withDefaults()
	if o.Max <= 1 || os.Getenv("GOMAXPROCS") != "" || !running.CompareAndSwap(false, true) {
		return func() {}
	}
	before := runtime.GOMAXPROCS(1)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.run(quit)
	}()
	return sync.OnceFunc(func() {
		close(quit)
		<-done
		runtime.GOMAXPROCS(before)
		running.Store(false)
	})
}

// idleSample is the time between samples while nothing is waiting at one
// processor, so that an idle server is not woken 200 times a second: the
// first sample that finds a goroutine waiting starts a window at Sample.
const idleSample = 100 * time.Millisecond

func (o Options) run(quit <-chan struct{}) {
	sample := []metrics.Sample{{Name: runnableMetric}}
	if metrics.Read(sample); sample[0].Value.Kind() != metrics.KindUint64 {
		// A runtime without the metric: all processors, as without Adapt.
		runtime.GOMAXPROCS(o.Max)
		o.Logger.Warn("processors: the runtime does not report "+runnableMetric+"; not adapting", "processors", o.Max)
		<-quit
		return
	}
	s := state{procs: 1}
	t := time.NewTimer(o.Sample)
	defer t.Stop()
	var sum uint64
	var n int
	idle := false
	for {
		select {
		case <-quit:
			return
		case now := <-t.C:
			metrics.Read(sample)
			waiting := sample[0].Value.Uint64()
			if idle {
				if waiting == 0 {
					t.Reset(idleSample)
					continue
				}
				idle = false
			}
			sum += waiting
			n++
			if n == o.Window {
				mean := float64(sum) / float64(n) / float64(s.procs)
				next := o.step(s, mean, now)
				if next.procs != s.procs {
					runtime.GOMAXPROCS(next.procs)
					o.Logger.Debug("processors", "from", s.procs, "to", next.procs, "probing", next.probing, "waiting", mean)
				}
				idle = sum == 0 && next.procs == 1
				s, sum, n = next, 0, 0
			}
			if idle {
				t.Reset(idleSample)
			} else {
				t.Reset(o.Sample)
			}
		}
	}
}

const runnableMetric = "/sched/goroutines/runnable:goroutines"
