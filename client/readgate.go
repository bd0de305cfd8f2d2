package client

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/chatterm/chat/wire"
)

// Reading the socket once a hold, not once a frame.
//
// A steady stream arrives as one WebSocket message a frame, a few ms apart.
// The hold (hold.go) makes them share a commit, but the reader still woke for
// each: the poller's wake-up, a read syscall, a hand-off. While a batch is
// held the reader stops reading the socket instead; the frames wait in the
// kernel's buffer and, when the hold ends, come out of it in one read. The
// hold then ends when the reader has read everything that came, which it
// knows when a read of the socket would block: the connection under the
// WebSocket is wrapped (gatedConn) to try each read without waiting first.
// A connection that cannot be wrapped (a RoundTripper other than
// *http.Transport, a platform without non-blocking reads here) is held on a
// timer alone, as before.

// readGate is what the serve loop and its reader share about the socket:
// until when the reader leaves it alone, and whether it is waiting on a
// socket with nothing to read (or on a full queue: either way it has handed
// over all it can).
type readGate struct {
	mu    sync.Mutex
	until time.Time
	idle  bool
	// wake is closed at the reader's next idle; nil while nobody waits.
	wake chan struct{}
	// served is closed at the serve loop's next decision (servedSignal).
	served chan struct{}
	// catchingUp: the reader is reading what came during a pause; it is
	// over when the socket is empty.
	catchingUp bool
	// reads counts the socket reads that returned data, for a test.
	reads int
	// lowWater raises the socket's receive low-water mark during a pause
	// and lowers it after (readgate_lowat_linux.go); nil where it cannot.
	// lowWaterPauses counts the pauses it was raised for, for a test.
	lowWater       func(held bool) error
	lowWaterPauses int
	// armed: the WebSocket's socket was wrapped; a gate that is not is
	// dropped (dial), and the hold waits on its timer alone.
	armed bool
	// The transport's dials running in gatedClient's wrapper (net/http dials
	// on a goroutine of its own that outlives a cancelled request): dial
	// ends them once it has its answer and waits for them, so that a
	// session's Run leaves nothing of its own behind. dialsEnded refuses a
	// dial that starts after that.
	dialing     int
	dialsEnded  bool
	dialsIdle   chan struct{} // closed when dialing drops to 0 after the end
	cancelDials context.CancelFunc
}

// enterDial counts a dial in; false once the dials were ended.
func (g *readGate) enterDial() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dialsEnded {
		return false
	}
	g.dialing++
	return true
}

func (g *readGate) leaveDial() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dialing--
	if g.dialing == 0 && g.dialsIdle != nil {
		close(g.dialsIdle)
		g.dialsIdle = nil
	}
}

// endDials cancels the dials still running and waits for them to return.
func (g *readGate) endDials() {
	g.mu.Lock()
	g.dialsEnded = true
	if g.cancelDials != nil {
		g.cancelDials()
	}
	if g.dialing == 0 {
		g.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	g.dialsIdle = idle
	g.mu.Unlock()
	<-idle
}

func (g *readGate) isArmed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.armed
}

// pause has the reader leave the socket alone until the time given: what
// comes meanwhile is read at once after it.
func (g *readGate) pause(until time.Time) {
	g.mu.Lock()
	g.until = until
	g.mu.Unlock()
	g.decided()
}

// caughtUp is closed once the reader is idle: at once if it is now.
func (g *readGate) caughtUp() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.wake == nil {
		g.wake = make(chan struct{})
	}
	ch := g.wake
	if g.idle {
		close(ch)
		g.wake = nil
	}
	return ch
}

// setIdle says whether the reader is waiting with nothing more to hand over.
func (g *readGate) setIdle(idle bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idle = idle
	if idle {
		g.catchingUp = false
	}
	if idle && g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
}

// waitPause is the reader's side of pause: it returns when the pause is over
// or ctx ends.
func (g *readGate) waitPause(ctx context.Context) {
	g.mu.Lock()
	until := g.until
	g.until = time.Time{}
	lowWater := g.lowWater
	g.mu.Unlock()
	d := time.Until(until)
	if d <= 0 {
		return
	}
	if lowWater != nil && lowWater(true) == nil {
		g.mu.Lock()
		g.lowWaterPauses++
		g.mu.Unlock()
		// Lowered again before the reader reads on. A socket that refuses
		// it is closing: its read says so.
		defer func() { _ = lowWater(false) }()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.catchingUp = true
	g.mu.Unlock()
}

func (g *readGate) read() {
	g.mu.Lock()
	g.reads++
	g.mu.Unlock()
}

// handOver queues a frame for the serve loop; false when ctx ended first.
// A frame that finds the queue empty likely starts a batch, which the serve
// loop may hold: the reader then waits for its decision (a pause, or the
// batch taken) before it reads on, so the stream's next frame waits in the
// socket too. A reader waiting here, or on a full queue, has handed over all
// it read: it counts as idle, so a hold waiting for it to catch up does not
// wait on itself. behind says frames of the same WebSocket message follow f,
// read already (the server joins what it has queued): they are handed over
// at once, so a joined burst makes one batch, not a batch of its first frame
// and a held one of the rest.
func handOver(ctx context.Context, frames chan<- wire.Frame, f wire.Frame, g *readGate, behind bool) bool {
	var served <-chan struct{}
	if g != nil && !behind && len(frames) == 0 {
		served = g.servedSignal() // nil while catching up after a pause
	}
	select {
	case frames <- f:
	default:
		if g != nil {
			g.setIdle(true)
		}
		select {
		case frames <- f:
		case <-ctx.Done():
			return false
		}
		if g != nil {
			g.setIdle(false)
		}
	}
	if served == nil || g.paused() {
		return true
	}
	g.setIdle(true)
	defer g.setIdle(false)
	select {
	case <-served:
		return true
	case <-ctx.Done():
		return false
	}
}

// servedSignal is closed when the serve loop next decides about a batch:
// pauses the reader, or ends gathering it.
func (g *readGate) servedSignal() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.catchingUp {
		return nil // the frames after it are in the socket already
	}
	if g.served == nil {
		g.served = make(chan struct{})
	}
	return g.served
}

// decided is the serve loop's side of servedSignal.
func (g *readGate) decided() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.served != nil {
		close(g.served)
		g.served = nil
	}
}

// paused reports whether a pause is on now.
func (g *readGate) paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Now().Before(g.until)
}

// gatedClient is hc with the connection it dials wrapped for g, or nil when
// hc's transport cannot be (then the hold is on a timer alone). Its dials
// end with ctx, or when g.endDials is called.
func gatedClient(ctx context.Context, hc *http.Client, g *readGate) *http.Client {
	tr, ok := hc.Transport.(*http.Transport)
	if hc.Transport == nil {
		tr, ok = http.DefaultTransport.(*http.Transport)
	}
	if !ok || !nonBlockingReads {
		return nil
	}
	tr = tr.Clone()
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	dialsCtx, cancel := context.WithCancel(ctx)
	g.mu.Lock()
	g.cancelDials = cancel
	g.mu.Unlock()
	tr.DialContext = func(tctx context.Context, network, addr string) (net.Conn, error) {
		if !g.enterDial() {
			return nil, net.ErrClosed
		}
		defer g.leaveDial()
		dctx, stop := context.WithCancel(tctx)
		defer stop()
		defer context.AfterFunc(dialsCtx, stop)()
		c, err := dial(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc, ok := c.(syscall.Conn)
		if !ok {
			return c, nil
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return c, nil
		}
		g.mu.Lock()
		g.armed = true
		g.lowWater = lowWaterSetter(raw)
		g.mu.Unlock()
		return &gatedConn{Conn: c, raw: raw, gate: g}, nil
	}
	// The WebSocket's connection is taken over by the upgrade; nothing of
	// this transport is kept idle.
	tr.DisableKeepAlives = true
	c := *hc
	c.Transport = tr
	return &c
}

// gatedConn is the socket under one WebSocket: each read is tried without
// waiting, and the reader is idle while it waits.
type gatedConn struct {
	net.Conn
	raw  syscall.RawConn
	gate *readGate
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if n, done, err := tryRead(c.raw, p); done {
		if n > 0 {
			c.gate.read()
		}
		return n, err
	}
	c.gate.setIdle(true)
	defer c.gate.setIdle(false)
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.gate.read()
	}
	return n, err
}
