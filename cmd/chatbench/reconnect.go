package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatterm/chat/wire"
)

// ReconnectResult is the reconnect scenario's measurement.
type ReconnectResult struct {
	Clients        int     `json:"clients"`
	AllBackSeconds float64 `json:"all_back_s"`     // drop → every client has its hello again
	CaughtUp       float64 `json:"caught_up_s"`    // drop → every client holds every stored message
	SendersStopped float64 `json:"senders_stop_s"` // drop → the senders stopped (caught_up is at least this)
	Stored         int64   `json:"stored"`
	Missing        int64   `json:"missing"`
	Reordered      int64   `json:"reordered"`
	Duplicates     int64   `json:"duplicates_deduped"` // redelivered unacked messages: expected, clients dedupe
	Dials          int64   `json:"dials"`
	Errors         int64   `json:"errors"`
	FirstErr       string  `json:"first_error,omitempty"`
}

// receiver is a client that gets dropped and must come back with nothing missed.
type receiver struct {
	user, token, conv string
	conn              atomic.Pointer[wsConn]
	mu                sync.Mutex
	seen              map[int64]bool
	maxSeq            int64
	back              atomic.Int64 // unix ns of the hello after the drop
}

// reconnect: K receivers, each with a sender sending to it at a steady rate. All
// receivers are dropped at once (their TCP connections cut, no close handshake)
// and come back with exponential backoff and full jitter, while the
// senders keep sending. It measures how long until all are back and until all
// hold every stored message, and checks that none is missing or out of order.
func (b *bench) reconnect(ctx context.Context) error {
	return b.withTarget(ctx, "reconnect", func(t *target) error {
		k := b.reconnectK
		a := &api{base: t.url, hc: b.dial.api}
		sNames, rNames := b.userNames("rs", k), b.userNames("rr", k)
		sTok, err := a.register(ctx, sNames)
		if err != nil {
			return err
		}
		rTok, err := a.register(ctx, rNames)
		if err != nil {
			return err
		}
		recv := make([]*receiver, k)
		for i := range recv {
			conv, err := a.createConversation(ctx, sTok[i], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{rNames[i]}})
			if err != nil {
				return err
			}
			recv[i] = &receiver{user: rNames[i], token: rTok[i], conv: conv, seen: map[int64]bool{}}
		}
		sConns, err := b.dial.dialAll(ctx, t.url, sTok, 128)
		if err != nil {
			return err
		}
		defer closeAll(sConns)
		rConns, err := b.dial.dialAll(ctx, t.url, rTok, 128)
		if err != nil {
			return err
		}
		for i, r := range recv {
			r.conn.Store(rConns[i])
		}

		var res ReconnectResult
		var errs, dials, dups, reorders atomic.Int64
		var firstErr atomic.Value
		fail := func(err error) {
			errs.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
		}
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var dropped atomic.Bool
		var wg sync.WaitGroup
		for _, r := range recv {
			wg.Go(func() {
				for attempt := 0; rctx.Err() == nil; {
					c := r.conn.Load()
					f, err := c.read(rctx)
					if err != nil {
						if rctx.Err() != nil {
							return
						}
						if !dropped.Load() {
							fail(fmt.Errorf("%s lost its connection before the drop: %w", r.user, err))
							return
						}
						// Full jitter: sleep a random time up to the exponential bound.
						bound := min(50*time.Millisecond<<attempt, 2*time.Second)
						attempt++
						select {
						case <-time.After(rand.N(bound)):
						case <-rctx.Done():
							return
						}
						dials.Add(1)
						nc, err := b.dial.dial(rctx, t.url, r.token)
						if err != nil {
							// The old socket stays closed; reading it fails again and
							// the loop backs off further.
							continue
						}
						attempt = 0
						r.conn.Store(nc)
						r.back.CompareAndSwap(0, time.Now().UnixNano())
						continue
					}
					if f.Type != wire.TypeMessage {
						continue
					}
					m := f.Message
					r.mu.Lock()
					switch {
					case r.seen[m.SeqNo]:
						dups.Add(1)
					case m.SeqNo < r.maxSeq:
						reorders.Add(1)
						r.seen[m.SeqNo] = true
					default:
						r.seen[m.SeqNo] = true
						r.maxSeq = m.SeqNo
					}
					r.mu.Unlock()
					// Ack every message: the server then redelivers only the unacked tail.
					if err := c.write(rctx, wire.Frame{Type: wire.TypeAck, ConversationID: m.ConversationID, SeqNo: m.SeqNo}); err != nil && !dropped.Load() {
						fail(fmt.Errorf("ack as %s: %w", r.user, err))
					}
				}
			})
		}

		// Senders: a steady rate each; the highest stored seq per conversation is
		// what each receiver must end up with.
		lastStored := make([]atomic.Int64, k)
		var stored atomic.Int64
		stopSend := make(chan struct{})
		var swg sync.WaitGroup
		// The rate is the total over all senders, so a large K does not also mean
		// a load far beyond what the server stores.
		interval := time.Duration(float64(k) / b.reconnectRate * float64(time.Second))
		for i, sc := range sConns {
			swg.Go(func() { // reader of the sender's answers
				for {
					f, err := sc.read(rctx)
					if err != nil {
						return
					}
					switch f.Type {
					case wire.TypeSent:
						stored.Add(1)
						for {
							v := lastStored[i].Load()
							if f.SeqNo <= v || lastStored[i].CompareAndSwap(v, f.SeqNo) {
								break
							}
						}
					case wire.TypeError:
						fail(fmt.Errorf("send error to %s: %s", sNames[i], f.Error.Message))
					}
				}
			})
		}
		var sendWG sync.WaitGroup
		var sent atomic.Int64
		for i, sc := range sConns {
			sendWG.Go(func() {
				time.Sleep(rand.N(interval))
				tk := time.NewTicker(interval)
				defer tk.Stop()
				for n := 0; ; n++ {
					select {
					case <-stopSend:
						return
					case <-tk.C:
					}
					sent.Add(1)
					f := wire.Frame{Type: wire.TypeSend, ID: strconv.Itoa(n), ConversationID: recv[i].conv, MessageID: b.runID + "-r-" + strconv.Itoa(n), Content: "reconnect " + strconv.Itoa(n)}
					if err := sc.write(rctx, f); err != nil {
						fail(fmt.Errorf("send as %s: %w", sNames[i], err))
						return
					}
				}
			})
		}

		time.Sleep(time.Second)
		dropAt := time.Now()
		dropped.Store(true)
		var dwg sync.WaitGroup
		for _, r := range recv {
			dwg.Go(func() { r.conn.Load().sock.CloseNow() })
		}
		dwg.Wait()
		b.logf("dropped %d clients", k)
		time.Sleep(2 * time.Second)
		close(stopSend)
		sendWG.Wait()
		res.SendersStopped = time.Since(dropAt).Seconds()
		// Wait for the answers to every send, then for every receiver to be complete.
		deadline := time.Now().Add(60 * time.Second)
		for stored.Load()+errs.Load() < sent.Load() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		complete := func() (back int, missing int64) {
			for i, r := range recv {
				if r.back.Load() != 0 {
					back++
				}
				last := lastStored[i].Load()
				r.mu.Lock()
				for s := int64(1); s <= last; s++ {
					if !r.seen[s] {
						missing++
					}
				}
				r.mu.Unlock()
			}
			return back, missing
		}
		var missing int64
		var back int
		for {
			back, missing = complete()
			if back == k && missing == 0 || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		res.CaughtUp = time.Since(dropAt).Seconds()
		cancel()
		for _, r := range recv {
			r.conn.Load().sock.CloseNow()
		}
		closeAll(sConns)
		wg.Wait()
		swg.Wait()
		var lastBack int64
		for _, r := range recv {
			lastBack = max(lastBack, r.back.Load())
		}
		if lastBack > 0 {
			res.AllBackSeconds = time.Unix(0, lastBack).Sub(dropAt).Seconds()
		}
		res.Clients, res.Stored, res.Missing, res.Reordered, res.Duplicates, res.Dials, res.Errors =
			k, stored.Load(), missing, reorders.Load(), dups.Load(), dials.Load(), errs.Load()
		if v, ok := firstErr.Load().(string); ok {
			res.FirstErr = v
		}
		b.report.Scenarios["reconnect"] = res
		b.row("reconnect", "clients dropped", float64(k), "clients")
		b.row("reconnect", "all reconnected after", res.AllBackSeconds, "s")
		b.row("reconnect", "all caught up after", res.CaughtUp, "s")
		b.row("reconnect", "messages stored", float64(res.Stored), "messages")
		b.target("reconnect", "missing or reordered", float64(res.Missing+res.Reordered), "messages", "0", res.Missing+res.Reordered == 0)
		b.row("reconnect", "duplicates deduped", float64(res.Duplicates), "messages")
		switch {
		case back < k:
			return fmt.Errorf("only %d of %d clients came back", back, k)
		case res.Missing > 0 || res.Reordered > 0:
			return fmt.Errorf("%d messages missing, %d out of order", res.Missing, res.Reordered)
		case res.Errors > 0:
			return fmt.Errorf("%d errors (first: %s)", res.Errors, res.FirstErr)
		}
		return nil
	})
}
