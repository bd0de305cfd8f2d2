// Package protocol is the WebSocket protocol engine: frames in, frames out.
// It serves each connection's frames in order on a worker of its own (sends
// batched into one durable write per conversation, acks folded), answers
// them, runs the catch-up of a new connection and the syncs a client asks
// for, and sweeps live connections for what the live path missed. It works
// over the domain (server.Service) and the connection runtime (server/conn);
// the transport (server/httpd) reads sockets into HandleFrame and writes what
// the Conn queues.
package protocol

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatterm/chat/internal/gopool"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// Engine serves the connections of one node.
type Engine struct {
	svc     *server.Service
	hub     *conn.Hub
	log     *slog.Logger
	metrics *server.Metrics
	cfg     server.Config
	workers *gopool.Pool // runs connections' request workers

	mu       sync.Mutex
	sessions map[*Session]struct{}
	bg       sync.WaitGroup // the sweep and resync loops

	resync      resyncs // resync.go
	resyncTicks func() (<-chan time.Time, func())
	resyncStep  func(n int)
	sweepTicks  func(every time.Duration) (<-chan time.Time, func()) // sweep.go
	swept       func(n int)
}

// Session is one connection as the engine serves it: the runtime's Conn (its
// queue of frames out) and the engine's queue of requests in.
type Session struct {
	*conn.Conn

	mu        sync.Mutex
	work      []request // queued requests (sends, acks, syncs) run in order by one worker
	working   bool
	nextSweep atomic.Int64 // unix nanoseconds: when the sweep next checks its pending rows
	// sweepFails counts the sweeps in a row whose store read failed: the next
	// comes after a backoff from the grace period, not a whole period.
	sweepFails atomic.Int32

	// held is what the device says it holds, per conversation: the highest
	// cursor of its syncs and seq_no of its acks on this connection. Pending
	// rows are per user, and one device's ack clears them for all; while
	// Redis is down the sweep compares this instead (sweep.go). Only the
	// connection's worker touches it.
	held map[string]int64
}

// noteHeld records that the device holds convID up to seq.
func (c *Session) noteHeld(convID string, seq int64) {
	if c.held == nil {
		c.held = map[string]int64{}
	}
	if cur, ok := c.held[convID]; !ok || seq > cur {
		c.held[convID] = seq
	}
}

// New makes the engine of svc's node and starts its sweeps and resyncs;
// they end when svc shuts down, and Close waits for them.
func New(svc *server.Service, opts ...Option) *Engine {
	cfg := svc.Config()
	e := &Engine{svc: svc, hub: svc.Hub(), log: cfg.Logger, metrics: svc.Metrics(), cfg: cfg,
		workers: gopool.New(maxParkedWorkers), sessions: map[*Session]struct{}{},
		resync: resyncs{wake: make(chan struct{}, 1)}, resyncTicks: realResyncTicks, sweepTicks: realSweepTicks}
	for _, o := range opts {
		o(e)
	}
	svc.OnPublicationsLost(e.resyncAll)
	e.bg.Go(e.runSweeps)
	e.bg.Go(e.runResyncs)
	return e
}

// Close waits for the engine's background work and lets its parked workers
// go; call it after the Service's Shutdown, which ends that work (Shutdown
// waits for the connections' workers, and ends the sweeps).
func (e *Engine) Close() {
	e.bg.Wait()
	e.workers.Close()
}

// Connect registers a new connection of userID, opened with token, and starts
// its catch-up: the hello frame, then every pending message in seq order per
// conversation. Live messages that arrive meanwhile are held and follow the
// backlog.
func (e *Engine) Connect(ctx context.Context, userID, token, connID string) (*Session, error) {
	c := &Session{Conn: conn.New(connID, userID, server.HashSecret(token), e.cfg.SendBuffer)}
	// The hello goes first, before the session is anywhere a resync or a
	// delivery can find it: the registry write below can take seconds (a
	// lagging queue, a slow Redis), and a client reads its first frame as the
	// hello (TestHelloComesFirst).
	hello, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeHello, UserID: userID, Protocol: wire.ProtocolVersion, StoreID: e.svc.StoreID()})
	c.TrySend(conn.Frame{Data: hello, Queued: time.Now()})
	e.mu.Lock()
	e.sessions[c] = struct{}{}
	e.mu.Unlock()
	e.svc.AddConn(ctx, c.Conn)
	period := sweepEvery * e.cfg.RedeliverAfter
	c.nextSweep.Store(time.Now().Add(time.Duration(rand.Int64N(int64(period))) + period/sweepEvery).UnixNano())
	e.enqueue(c, request{run: func() {
		if err := e.catchUpPending(c); err != nil && !errors.Is(err, errConnEnded) {
			e.catchUpLater(c, 1)
		}
		c.EndCatchUp()
	}})
	return c, nil
}

// Disconnect forgets a connection (the transport calls it when the socket ends).
func (e *Engine) Disconnect(c *Session) {
	c.Close(1000, "")
	e.mu.Lock()
	delete(e.sessions, c)
	e.mu.Unlock()
	e.svc.RemoveConn(c.Conn)
}

// HandleFrame serves one decoded frame from a connection. Answers and errors go to
// the connection; nothing here blocks the read loop for long.
func (e *Engine) HandleFrame(c *Session, f wire.Frame) {
	e.metrics.FramesIn.WithLabelValues(f.Type).Inc()
	switch f.Type {
	case wire.TypeSend, wire.TypeAck, wire.TypeRead, wire.TypeSync:
		// Boundaries and syncs run on the worker too: after the sends queued before them.
		if !e.enqueue(c, request{frame: f}) {
			msg := "too many requests in flight; retry"
			if f.Type == wire.TypeSend {
				msg = "too many requests in flight on this connection; retry after the hint"
				if f.AckSeq > 0 {
					// The ack it carries still counts, as an ack frame would: folded
					// into one queued for the conversation when there is one.
					e.enqueue(c, request{frame: wire.Frame{Type: wire.TypeAck, ConversationID: f.ConversationID, SeqNo: f.AckSeq}})
				}
			}
			e.reply(c, wire.Frame{Type: wire.TypeError, ID: f.ID, Error: &wire.Error{Code: wire.CodeOverloaded, Message: msg, RetryAfterMs: 200}})
		}
	case wire.TypeTyping:
		// Behind the connection's sends (a typing frame comes before the
		// message it announces); dropped, unanswered, when the queue is full.
		e.enqueue(c, request{frame: f})
	case wire.TypePing:
		e.reply(c, wire.Frame{Type: wire.TypePong, ID: f.ID})
	default:
		e.reply(c, wire.ErrorFrame(f.ID, wire.Errorf(wire.CodeInvalid, "a client cannot send %q frames", f.Type)))
	}
}

// reply queues an answer to a request; answers wait for room rather than drop.
func (e *Engine) reply(c *Session, f wire.Frame) {
	data, err := wire.EncodeFrame(f)
	if err != nil {
		e.log.Error("encode reply", "type", f.Type, "err", err)
		return
	}
	c.SendWait(conn.Frame{Data: data, Queued: time.Now()})
}

// Reject answers a frame the transport could not decode.
func (e *Engine) Reject(c *Session, id string, err error) {
	e.metrics.FramesIn.WithLabelValues("invalid").Inc()
	e.reply(c, wire.ErrorFrame(id, err))
}

func ptr[T any](v T) *T { return &v }
