package protocol

import (
	"errors"
	"sync"
	"time"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// After a pub/sub break every device of the node was sent its resync at
// once, and each answered with a sync of every conversation it holds: a
// burst of reads that opened the nodes' DynamoDB breakers in chaos runs
// (issue 27). The resyncs are spread instead, a step at a time, over
// resyncWindow: every device still gets one, the last of them at most
// resyncWindow later than all at once. A node of resyncMinStep devices or
// fewer resyncs them all in the first step, at once.
const (
	resyncWindow  = 2 * time.Second
	resyncSteps   = 20 // steps in the window, resyncWindow/resyncSteps apart
	resyncMinStep = 10 // devices a step resyncs at least
)

// resyncs is the connections waiting for their resync, in the order they
// were found, and how many each step takes.
type resyncs struct {
	mu      sync.Mutex
	waiting []*Session
	queued  map[*Session]bool
	perStep int
	wake    chan struct{} // one waiting signal: the spread has work
}

// Option changes how an Engine is made (for tests).
type Option func(*Engine)

// WithResyncTicks paces the resync spread by ticks instead of a ticker
// resyncWindow/resyncSteps apart, and reports the count of connections each
// step resynced to step (called on the spread's goroutine, before their
// resyncs are queued): a test counts them per tick, without a clock.
func WithResyncTicks(ticks <-chan time.Time, step func(n int)) Option {
	return func(e *Engine) {
		e.resyncTicks = func() (<-chan time.Time, func()) { return ticks, func() {} }
		e.resyncStep = step
	}
}

// resyncAll puts every live connection of this node in line for a resync
// (one already in line keeps its place): called when publications to it may
// have been lost (the broker's subscription came back, the registry keeper
// restored this node's entries).
func (e *Engine) resyncAll() {
	live := e.live()
	r := &e.resync
	r.mu.Lock()
	if r.queued == nil {
		r.queued = map[*Session]bool{}
	}
	for _, c := range live {
		if !r.queued[c] {
			r.queued[c] = true
			r.waiting = append(r.waiting, c)
		}
	}
	r.perStep = max((len(r.waiting)+resyncSteps-1)/resyncSteps, resyncMinStep)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // already signalled
	}
}

// runResyncs resyncs the connections in line, a step at once and then a
// step a tick, until none waits; then it waits for the next resyncAll.
func (e *Engine) runResyncs() {
	done := e.svc.Context().Done()
	for {
		select {
		case <-done:
			return
		case <-e.resync.wake:
		}
		ticks, stop := e.resyncTicks()
		for e.resyncStepOnce() {
			select {
			case <-done:
				stop()
				return
			case <-ticks:
			}
		}
		stop()
	}
}

// resyncStepOnce resyncs the next step's connections, and says whether more
// wait.
func (e *Engine) resyncStepOnce() bool {
	r := &e.resync
	r.mu.Lock()
	n := min(r.perStep, len(r.waiting))
	step := make([]*Session, n)
	copy(step, r.waiting)
	clear(r.waiting[:n])
	r.waiting = r.waiting[n:]
	for _, c := range step {
		delete(r.queued, c)
	}
	more := len(r.waiting) > 0
	r.mu.Unlock()
	if n == 0 {
		return false // a wake-up for connections an earlier step took
	}
	if e.resyncStep != nil {
		e.resyncStep(n)
	}
	for _, c := range step {
		e.resyncOne(c)
	}
	return more
}

// resyncOne re-runs c's catch-up: what is pending for its user, in seq
// order (what it had already, its client drops as a duplicate), then a
// resync frame: pending rows are per user, so a message another device of
// the user acked is in none, and only the device's own sync from its
// cursors brings it. A connection that ended meanwhile is skipped.
func (e *Engine) resyncOne(c *Session) {
	select {
	case <-c.Closed():
		return
	default:
	}
	hint, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeResync})
	queued := e.enqueue(c, request{run: func() {
		if err := e.catchUpPending(c); err != nil && !errors.Is(err, errConnEnded) {
			e.catchUpLater(c, 1)
		}
		c.TrySend(conn.Frame{Data: hint, Queued: time.Now()})
	}})
	if !queued && !e.svc.Closing() {
		e.catchUpLater(c, 1) // the connection's queue is full: later
		// The device's sync needs no turn of the worker: it may come first.
		c.TrySend(conn.Frame{Data: hint, Queued: time.Now()})
	}
}

// realResyncTicks is a ticker resyncWindow/resyncSteps apart.
func realResyncTicks() (<-chan time.Time, func()) {
	t := time.NewTicker(resyncWindow / resyncSteps)
	return t.C, t.Stop
}
