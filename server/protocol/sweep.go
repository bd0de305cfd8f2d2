package protocol

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// sweepEvery is the sweep period in grace periods: each live connection's
// pending rows are read once per sweepEvery × RedeliverAfter (30 s by
// default), so a message whose every other path was lost still arrives within
// that time, for one read per connection per period.
const sweepEvery = 10

// runSweeps checks the live connections' sweep times until the Service's
// context ends.
func (e *Engine) runSweeps() {
	ticks, stop := e.sweepTicks(max(e.cfg.RedeliverAfter/4, 10*time.Millisecond))
	defer stop()
	for {
		select {
		case <-e.svc.Context().Done():
			return
		case now := <-ticks:
			n := e.sweepLocal(now)
			if e.swept != nil {
				e.swept(n)
			}
		}
	}
}

// realSweepTicks is a ticker every d.
func realSweepTicks(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// WithSweepTicks runs the sweeps on ticks instead of a ticker a quarter of
// a grace period apart (each tick's time is the sweep's now), and reports
// how many connections each tick swept to swept: a test counts them per
// tick, on a clock of its own.
func WithSweepTicks(ticks <-chan time.Time, swept func(n int)) Option {
	return func(e *Engine) {
		e.sweepTicks = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
		e.swept = swept
	}
}

// live lists the connections served now.
func (e *Engine) live() []*Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Session, 0, len(e.sessions))
	for c := range e.sessions {
		out = append(out, c)
	}
	return out
}

// sweepLocal catches up the live connections whose sweep time has come, and
// says how many it swept. A new connection's first sweep is a random time
// into the period (set in Connect), so the reads spread evenly over it
// rather than come in bursts.
//
// While the registry is down (Redis), the sweep is the only path by which
// messages stored on other nodes reach this node's connections: the broker
// cannot carry them and their nodes cannot find them. So for as long as it
// is down every live connection is swept once per grace period instead of
// once per sweepEvery of them: a message then arrives within about two
// grace periods (6 s by default) rather than up to a whole period and a
// half (45 s), for ten times the pending reads, only during the outage. One
// registry read per tick tells: the registry's breaker answers it at once
// while it is open.
//
// When the registry is found down, each connection's next sweep is moved to
// a random time in the coming grace period, not to its end: moved to its
// end, every connection came due in the same tick, and stayed in step for
// the whole outage, a burst of every device's reads each grace period (the
// reads the chaos run saw queue behind each other). Spread, a tick (a
// quarter of a grace period) sweeps about a quarter of the connections.
func (e *Engine) sweepLocal(now time.Time) (swept int) {
	live := e.live()
	if len(live) == 0 {
		return 0
	}
	down := e.svc.RegistryDown(e.svc.Context(), live[0].UserID)
	period := sweepEvery * e.cfg.RedeliverAfter
	if down {
		period = e.cfg.RedeliverAfter
	}
	soon := now.Add(period).UnixNano()
	var due []*Session
	for _, c := range live {
		next := c.nextSweep.Load()
		if next == 0 {
			continue
		}
		if next <= now.UnixNano() {
			due = append(due, c)
		} else if down && next > soon {
			c.nextSweep.Store(now.UnixNano() + rand.Int64N(int64(period)))
		}
	}
	cutoff := now.Add(-e.cfg.RedeliverAfter)
	for _, c := range due {
		c.nextSweep.Store(soon)
		e.enqueue(c, request{run: func() {
			if err := e.sweepPending(c, cutoff, down); err != nil {
				e.sweepFailed(c)
				return
			}
			c.sweepFails.Store(0)
		}})
	}
	return len(due)
}

// sweepFailed brings c's next sweep forward after a sweep whose store read
// failed: a grace period after the first failure, doubling with each next
// one up to the period. Waiting the whole period would leave what is
// pending undelivered for as long, though the store may answer a moment
// later.
func (e *Engine) sweepFailed(c *Session) {
	fails := min(c.sweepFails.Add(1), 5)
	wait := min(e.cfg.RedeliverAfter<<(fails-1), sweepEvery*e.cfg.RedeliverAfter)
	at := time.Now().Add(wait).UnixNano()
	if next := c.nextSweep.Load(); next == 0 || next > at {
		c.nextSweep.Store(at)
	}
}

// sweepPending sends c what is pending for its user and was stored before
// cutoff: younger messages are on their way and will be acked, and sending
// them now would only make a duplicate of every message in flight.
//
// With the registry down (Redis), other nodes' live copies do not reach c,
// and a pending row says too little: another device of the user, on the
// node that stored the message, got it live and its ack cleared the row. So
// for each conversation the device has said it holds up to some seq_no (its
// syncs and acks on this connection), it reads the conversation's last stored
// message and sends what the device lacks. That is one conversation read per
// such conversation and connection per sweep period, only while the registry
// is down; no write.
//
// It returns an error when the store did not answer a read (what it could
// send stands): the caller tries again sooner than the period.
func (e *Engine) sweepPending(c *Session, cutoff time.Time, registryDown bool) error {
	ctx := e.svc.Context()
	pend, err := e.svc.PendingFor(ctx, c.UserID)
	if err != nil {
		e.log.Debug("sweep: list pending", "user", c.UserID, "err", err)
		return err
	}
	var failed error
	after := make(map[string]int64, len(pend)) // conversation → send what was stored after this
	var order []string
	for _, p := range pend {
		after[p.ConversationID] = p.FirstUndeliveredSeq - 1
		order = append(order, p.ConversationID)
	}
	if registryDown {
		for conv, held := range c.held {
			if from, ok := after[conv]; ok && from <= held {
				continue // the pending row covers it
			}
			last, err := e.svc.LastStoredSeq(ctx, conv)
			if err != nil {
				e.log.Debug("sweep: read conversation", "conversation", conv, "err", err)
				failed = err
				continue
			}
			if last <= held {
				continue
			}
			// The positions came from acks and syncs the Service checked, but
			// the user may have left the conversation since.
			if members, err := e.svc.Members(ctx, conv); err != nil || !slices.Contains(members, c.UserID) {
				continue
			}
			if _, ok := after[conv]; !ok {
				order = append(order, conv)
			}
			after[conv] = held
		}
	}
	for _, conv := range order {
		msgs, err := e.svc.MessagesAfter(ctx, conv, after[conv], catchUpPage)
		if err != nil {
			e.log.Debug("sweep: read messages", "conversation", conv, "err", err)
			failed = err
			continue
		}
		for _, m := range msgs {
			if !m.Timestamp.Before(cutoff) {
				break
			}
			e.metrics.Redelivered.Inc()
			data, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeMessage, Message: ptr(m.Wire())})
			if !c.SendWait(conn.Frame{Data: data, Queued: time.Now(), Message: true, ConversationID: m.ConversationID, SeqNo: m.SeqNo}) {
				return nil // the connection ended
			}
		}
	}
	return failed
}
