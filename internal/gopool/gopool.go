// Package gopool runs short bursts of work on goroutines that are kept for the
// next burst instead of exiting.
//
// The server starts a goroutine for each burst of a connection's work (its
// request worker, its socket writer) so that an idle connection holds none. A
// new goroutine starts on a small stack and grows it on every burst: stack
// copying was 4.5% of the server's CPU at 10,000 unbatched messages/s. A
// goroutine that waits here for the next burst keeps the stack it grew.
package gopool

import "sync/atomic"

// Pool keeps up to a fixed number of goroutines parked between bursts. The zero
// value is not usable; call New.
type Pool struct {
	idle   chan func()
	done   chan struct{} // closed by Close: parked goroutines exit
	closed atomic.Bool
	parked atomic.Int32
	max    int32
}

// New returns a Pool that keeps at most maxIdle goroutines parked; a goroutine
// that finishes while maxIdle are already parked exits.
func New(maxIdle int) *Pool {
	return &Pool{idle: make(chan func()), done: make(chan struct{}), max: int32(maxIdle)}
}

// Go runs fn on a parked goroutine, or on a new one when none is parked. Like the
// go statement it never waits for fn; it never waits for a goroutine either.
func (p *Pool) Go(fn func()) {
	select {
	case p.idle <- fn:
	default:
		go p.run(fn)
	}
}

// Parked says how many goroutines wait for work (for tests and metrics).
func (p *Pool) Parked() int { return int(p.parked.Load()) }

// Close lets the parked goroutines exit, and those still running exit when
// their work is done instead of parking: the pool's owner calls it when it
// has stopped handing out work (Go still works after it, without parking).
func (p *Pool) Close() {
	if p.closed.CompareAndSwap(false, true) {
		close(p.done)
	}
}

func (p *Pool) run(fn func()) {
	for {
		fn()
		if p.closed.Load() {
			return
		}
		if p.parked.Add(1) > p.max {
			p.parked.Add(-1)
			return
		}
		select {
		case fn = <-p.idle:
			p.parked.Add(-1)
		case <-p.done:
			p.parked.Add(-1)
			return
		}
	}
}
