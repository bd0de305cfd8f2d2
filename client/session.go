package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// SessionConfig configures NewSession.
type SessionConfig struct {
	API   *API              // required: server and token
	Store *localstore.Store // required: the account's cache (its UserID is "me")
	// Logger receives diagnostics. Nil: discarded.
	Logger *slog.Logger
	// Backoff is the reconnect policy; zero fields take the defaults.
	Backoff Backoff
	// Rand draws the jitter in [0, 1). Nil: math/rand.
	Rand func() float64
	// Filter, when set, limits the session to the conversations it accepts:
	// messages of others are neither stored nor acked (chat tail --with).
	Filter func(conversationID string) bool
	// EventBuffer is the capacity of the Events channel. Default 256.
	EventBuffer int
	// Events, when set, is the channel the session reports to instead of one
	// of its own: a UI that replaces its session (a new login) hands each the
	// same channel, so its reader never changes and nothing translates.
	Events chan Event
	// PingInterval is how often an idle connection is pinged; a connection that
	// has said nothing for 2.5 intervals is dropped and redialled. Default 20s.
	PingInterval time.Duration
	// WriteTimeout bounds one frame write. Default 10s.
	WriteTimeout time.Duration
	// HoleWait is how long a gap below a conversation's newest message must
	// outlive complete syncs before the cursor passes it as a seq_no no message
	// took. A write that failed leaves such a gap for good, but one still in
	// flight (its answer lost, or committed after a later number's) fills in
	// later, and passing it at once would tell the server it was delivered.
	// Default 10s.
	HoleWait time.Duration
	// AckDelay is how long a cumulative ack may wait after the messages it
	// covers were stored, so that one ack covers a burst and, on a server of
	// protocol 2 or later, rides on the next send into that conversation
	// (ack_seq) instead of taking a WebSocket message of its own. It only
	// delays the sender's "delivered" tick; delivery itself is not held.
	// MarkRead's reports wait as long, for the same reason (reads.go).
	// Default 50ms; negative: every ack and read at once.
	AckDelay time.Duration
	// MessageBatches has the messages each receive commit stores reported
	// as one MessagesEvent, not one MessageEvent each (batchevents.go).
	MessageBatches bool
	// StreamPauses has the session report a StreamPausedEvent when a stream
	// of incoming messages pauses (streampause.go).
	StreamPauses bool
}

// DefaultAckDelay is SessionConfig.AckDelay's default: well under what a
// person notices on a tick, and longer than the gap between a busy chat's
// messages, so that in a conversation going both ways nearly every ack rides
// on a reply.
const DefaultAckDelay = 50 * time.Millisecond

// Session keeps an account's cache in step with the server over a WebSocket.
// Run connects and reconnects; the other methods may be called from any
// goroutine, before, during or after Run, online or not.
type Session struct {
	api    *API
	store  *localstore.Store
	self   string
	log    *slog.Logger
	cfg    SessionConfig
	events chan Event
	owns   bool // Close closes the store
	runs   atomic.Bool
	kick   chan struct{} // cuts a reconnect wait short (RetryNow)

	// sendMu orders sends: an Enqueue and a connection's outbox resend never
	// interleave, so messages leave in the order they were typed.
	sendMu sync.Mutex

	// later is what Run started to run after a delay (a refused send's
	// retry): Run stops or waits for all of it before it returns, so nothing
	// touches the store after Close.
	later   sync.WaitGroup
	mu      sync.Mutex
	timers  map[*time.Timer]bool
	link    *link                        // the live connection, nil when none
	waiters map[string][]chan sendResult // message_id -> Send calls waiting for "sent"
	reads   map[string]int64             // read boundaries not yet told to the server
	// readFlushArmed: a flushReads is scheduled (reads.go).
	readFlushArmed bool
	state          State
	syncSeq        int
	typing         typingSent

	// Test hooks (export_test.go), set before Run: whether a batch of
	// incoming frames was held (hold.go) and how long, how many frames it
	// found queued, and
	// each commit of received
	// messages with how many it stored.
	heldHook    func(hold time.Duration, queued int)
	storedHook  func(messages int)
	historyHook func() // between History's two reads, for a test
}

// NewSession makes a session; nothing happens on the network until Run.
func NewSession(cfg SessionConfig) *Session {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.EventBuffer <= 0 {
		cfg.EventBuffer = 256
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 20 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.AckDelay == 0 {
		cfg.AckDelay = DefaultAckDelay
	}
	if cfg.HoleWait <= 0 {
		cfg.HoleWait = 10 * time.Second
	}
	cfg.Backoff = cfg.Backoff.withDefaults()
	if cfg.Events == nil {
		cfg.Events = make(chan Event, cfg.EventBuffer)
	}
	s := &Session{
		api:     cfg.API,
		store:   cfg.Store,
		self:    cfg.Store.UserID(),
		log:     cfg.Logger,
		cfg:     cfg,
		events:  cfg.Events,
		kick:    make(chan struct{}, 1),
		waiters: map[string][]chan sendResult{},
		reads:   map[string]int64{},
		state:   State{Status: Offline},
	}
	if n, err := cfg.Store.Unsent(context.Background()); err == nil {
		s.state.Unsent = n
	}
	return s
}

// Open loads the login of cfg, opens the account's cache and returns a session
// that owns it (Close closes it). With no login the error is ErrNotLoggedIn.
// It asks the server who we are only when CHAT_TOKEN names an unknown login.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	acct, err := cfg.LoadAccount()
	if err != nil {
		return nil, err
	}
	api := NewAPI(acct.Server, acct.Token, cfg.HTTPClient)
	if acct.UserID == "" {
		p, err := api.Me(ctx)
		if err != nil {
			if wire.ErrorCode(err) == wire.CodeUnauthorized {
				return nil, fmt.Errorf("%w: the server refused CHAT_TOKEN", ErrNotLoggedIn)
			}
			return nil, fmt.Errorf("find out who CHAT_TOKEN belongs to: %w", err)
		}
		acct.UserID = p.UserID
	}
	path, err := cfg.CachePath(acct.Server, acct.UserID)
	if err != nil {
		return nil, err
	}
	store, err := localstore.Open(ctx, path, localstore.Options{UserID: acct.UserID})
	if err != nil {
		return nil, err
	}
	s := NewSession(SessionConfig{API: api, Store: store, Logger: cfg.logger(), Events: cfg.Events, MessageBatches: cfg.MessageBatches, StreamPauses: cfg.StreamPauses})
	s.owns = true
	return s, nil
}

// Close closes the cache if the session opened it. Stop Run first (cancel its
// context).
func (s *Session) Close() error {
	if s.owns {
		return s.store.Close()
	}
	return nil
}

// UserID is the account's user.
func (s *Session) UserID() string { return s.self }

// Server is the server's base URL.
func (s *Session) Server() string { return s.api.Server() }

// API is the session's HTTP client.
func (s *Session) API() *API { return s.api }

// Store is the session's cache, for reads (Inbox, Statuses, Messages).
func (s *Session) Store() *localstore.Store { return s.store }

// Events delivers what happens. The UI must keep reading it: a full channel
// holds up the session (except StateEvents, which are dropped when it is full).
func (s *Session) Events() <-chan Event { return s.events }

// State returns the current connection state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *Session) setState(fn func(*State)) {
	s.mu.Lock()
	old := s.state
	fn(&s.state)
	st := s.state
	s.mu.Unlock()
	if st != old {
		select {
		case s.events <- StateEvent{State: st}:
		default: // the UI is behind; it can ask State()
		}
	}
}

func (s *Session) refreshUnsent(ctx context.Context) {
	n, err := s.store.Unsent(ctx)
	if err != nil {
		s.log.Warn("count unsent", "err", err)
		return
	}
	s.setState(func(st *State) { st.Unsent = n })
}

func (s *Session) emit(ctx context.Context, ev Event) {
	select {
	case s.events <- ev:
	case <-ctx.Done():
	}
}

// Run connects and keeps the session connected until ctx ends (it then returns
// ctx's error) or the server refuses the token (an error wrapping
// ErrNotLoggedIn). Between attempts it waits per the Backoff.
func (s *Session) Run(ctx context.Context) error {
	if !s.runs.CompareAndSwap(false, true) {
		return errors.New("session: Run is already running")
	}
	defer s.runs.Store(false)
	defer s.stopLater()
	attempt := 0
	s.setState(func(st *State) { st.Status, st.LoggedOut, st.Disabled = Connecting, false, false })
	for {
		conn, err := dial(ctx, s.api.Server(), s.api.Token(), s.api.hc, true)
		if err == nil {
			up := time.Now()
			err = s.serve(ctx, conn)
			if time.Since(up) >= s.cfg.Backoff.Stable {
				attempt = 0
			}
		}
		if ctx.Err() != nil {
			s.setState(func(st *State) { st.Status, st.Err = Offline, "" })
			return ctx.Err()
		}
		if TokenRevoked(err) {
			if err := s.whyRefused(ctx, err); AccountDisabled(err) {
				s.setState(func(st *State) { st.Status, st.LoggedOut, st.Disabled, st.Err = Offline, true, true, err.Error() })
				return err
			}
			s.setState(func(st *State) { st.Status, st.LoggedOut, st.Err = Offline, true, err.Error() })
			return fmt.Errorf("%w: the server refused the token (%v); log in again", ErrNotLoggedIn, err)
		}
		delay := s.cfg.Backoff.Delay(attempt, s.cfg.Rand)
		attempt++
		s.log.Info("disconnected; will reconnect", "err", err, "in", delay)
		s.setState(func(st *State) {
			st.Status, st.RetryAt = Reconnecting, time.Now().Add(delay)
			if err != nil {
				st.Err = err.Error()
			}
		})
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.kick:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			s.setState(func(st *State) { st.Status = Offline })
			return ctx.Err()
		}
	}
}

// after runs f after d, unless Run ends first; Run waits for it if it began.
func (s *Session) after(d time.Duration, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock() // held until t is recorded: f's removal must find it
	if s.timers == nil {
		s.timers = map[*time.Timer]bool{}
	}
	s.later.Add(1)
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		defer s.later.Done()
		s.mu.Lock()
		delete(s.timers, t)
		s.mu.Unlock()
		f()
	})
	s.timers[t] = true
}

// stopLater cancels what after scheduled and waits for what already began.
func (s *Session) stopLater() {
	s.mu.Lock()
	for t := range s.timers {
		if t.Stop() {
			s.later.Done()
		}
		delete(s.timers, t)
	}
	s.mu.Unlock()
	s.later.Wait()
}

// RetryNow cuts the current reconnect wait short: the next attempt starts at
// once. Sending a message while disconnected does the same, since the user is
// waiting on it. It does nothing while connected.
func (s *Session) RetryNow() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// link is one live connection: its writer queue and what was sent on it.
type link struct {
	conn   *Conn
	out    chan wire.Frame
	ctx    context.Context // ends when the connection does
	cancel context.CancelCauseFunc
	sent   map[string]bool // message_ids sent on this connection (guarded by Session.mu)

	// acks: what each conversation was acked up to on this connection, and
	// what is stored here and waits for an ack (SessionConfig.AckDelay). Sends
	// take a waiting ack with them, from other goroutines, hence the lock.
	ackMu  sync.Mutex
	acked  map[string]int64
	ackDue map[string]int64
	// Owned by the serve goroutine:
	ackTimer <-chan time.Time // fires when the waiting acks are due
	syncs    map[string]bool  // ids of the sync requests of the round in flight
	round    map[string]int64 // the round's conversations and their cursors when asked
	more     bool             // an answer of this round was cut short
	gapped   map[string]bool  // conversations to sync once the round ends
	// syncRetry is the longest retry hint of the round's failed syncs, and
	// resync fires when the round is to be asked again.
	syncRetry time.Duration
	resync    <-chan time.Time
	// holes are the conversations a complete sync left with a gap below their
	// newest message, with the cursor and time it was first seen; holeCheck
	// fires when the oldest is due to be looked at again.
	holes     map[string]hole
	holeCheck <-chan time.Time
	// pace is when received frames were last committed and how long the
	// stream has gone on: a batch soon after is part of a stream and may be
	// held (hold.go).
	pace receivePace
}

type hole struct {
	cursor int64
	since  time.Time
}

// push queues a frame for the writer; false if the connection ended first.
func (l *link) push(ctx context.Context, f wire.Frame) bool {
	select {
	case l.out <- f:
		return true
	case <-l.ctx.Done():
		return false
	case <-ctx.Done():
		return false
	}
}

// serve runs one connection until it ends, and returns why.
func (s *Session) serve(ctx context.Context, conn *Conn) error {
	// Everything started for this connection ends before serve returns (the
	// deferred calls run in reverse: the socket closes, then lctx ends, then
	// this waits).
	var running sync.WaitGroup
	defer running.Wait()
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l := &link{conn: conn, out: make(chan wire.Frame, 1024), ctx: lctx, cancel: cancel,
		sent: map[string]bool{}, acked: map[string]int64{}, ackDue: map[string]int64{}, gapped: map[string]bool{}, holes: map[string]hole{}}
	defer conn.CloseNow()

	// The writer: the only goroutine writing to the socket, so frames keep the
	// order they were queued in (a resent message before a newer one).
	running.Add(1)
	go func() {
		defer running.Done()
		var batch []wire.Frame
		for {
			select {
			case f := <-l.out:
				// What queued meanwhile goes in the same WebSocket message
				// (docs/protocol.md): a burst of sends, or acks with a send.
				batch = append(batch[:0], f)
			more:
				for len(batch) < maxFramesPerWrite {
					select {
					case f := <-l.out:
						batch = append(batch, f)
					default:
						break more
					}
				}
				if s.log.Enabled(lctx, slog.LevelDebug) {
					for _, f := range batch {
						s.log.Debug("frame out", "type", f.Type, "id", f.ID, "conversation", f.ConversationID, "seq", f.SeqNo, "ack_seq", f.AckSeq)
					}
				}
				wctx, wcancel := context.WithTimeout(lctx, s.cfg.WriteTimeout)
				err := conn.WriteFrames(wctx, batch)
				wcancel()
				if err != nil {
					cancel(fmt.Errorf("write %s: %w", batch[0].Type, err))
					return
				}
			case <-lctx.Done():
				return
			}
		}
	}()

	// The reader: always reading (coder/websocket's rule), handing frames over.
	frames := make(chan wire.Frame, 256)
	running.Add(1)
	go func() {
		defer running.Done()
		defer close(frames)
		for {
			f, err := conn.Read(lctx)
			if err != nil {
				if wire.ErrorCode(err) == wire.CodeInvalid {
					s.log.Warn("skipping a frame that does not decode", "err", err)
					continue
				}
				cancel(err)
				return
			}
			if s.log.Enabled(lctx, slog.LevelDebug) {
				s.log.Debug("frame in", "type", f.Type, "id", f.ID, "seq", f.SeqNo, "err", f.Error)
			}
			behind := conn.Buffered()
			if !handOver(lctx, frames, f, conn.gate, behind) {
				return
			}
			if conn.gate != nil && !behind {
				conn.gate.waitPause(lctx) // a held batch: what comes waits in the socket
			}
		}
	}()

	// Before anything is synced or sent: a restored server must not be
	// asked from cursors above what it has (reconcile.go).
	if err := s.checkStore(ctx, conn.StoreID()); err != nil {
		return err
	}
	cursors, err := s.store.Cursors(ctx)
	if err != nil {
		return err
	}
	if err := s.startRound(ctx, l, cursors); err != nil {
		return err
	}
	// The outbox goes before anything typed from now on: publishing the link
	// under sendMu makes later Enqueues queue behind the resend.
	s.sendMu.Lock()
	err = s.resendOutbox(ctx, l)
	s.mu.Lock()
	s.link = l
	reads := s.reads
	s.reads = map[string]int64{}
	s.readFlushArmed = false // a flush the last Run cancelled (stopLater) is not waiting
	s.mu.Unlock()
	s.sendMu.Unlock()
	if err != nil {
		return err
	}
	defer func() {
		s.mu.Lock()
		if s.link == l {
			s.link = nil
		}
		s.mu.Unlock()
	}()
	s.setState(func(st *State) { st.Status, st.Err, st.RetryAt = Connected, "", time.Time{} })
	s.log.Info("connected", "server", s.api.Server(), "user", conn.UserID())
	select {
	case <-s.kick: // a RetryNow from before this connection is spent
	default:
	}
	for conv, seq := range reads {
		l.push(ctx, wire.Frame{Type: wire.TypeRead, ConversationID: conv, SeqNo: seq})
	}
	running.Add(1)
	go func() {
		defer running.Done()
		s.refreshInbox(lctx)
	}()

	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	pause := newPauseWatch(s.cfg.StreamPauses)
	defer pause.stop()
	lastHeard := time.Now()
	pings := 0
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return context.Cause(lctx)
			}
			lastHeard = time.Now()
			batch := s.gather(frames, f, &l.pace, conn.gate, lctx.Done())
			// Only messages move the pause: a boundary, a typing note or a
			// pong after a stream's last message is not the stream going
			// on (in a group the members' acks come every few ms).
			messages := carriesMessage(batch)
			if messages {
				pause.stop()
			}
			if err := s.handle(ctx, l, batch); err != nil {
				return err
			}
			if messages {
				pause.watch()
			}
		case <-pause.c():
			pause.fired()
			select {
			case s.events <- StreamPausedEvent{}:
			default: // the UI is behind: its pacer's own quiet timer draws
			}
		case <-l.ackTimer:
			l.ackTimer = nil
			l.flushAcks(ctx)
		case <-l.holeCheck:
			l.holeCheck = nil
			for conv := range l.holes {
				l.gapped[conv] = true
			}
			if l.round == nil && len(l.gapped) > 0 {
				if err := s.syncGaps(ctx, l); err != nil {
					return err
				}
			}
		case <-l.resync:
			if err := s.resyncRound(ctx, l); err != nil {
				return err
			}
		case <-ping.C:
			if time.Since(lastHeard) > s.cfg.PingInterval*5/2 {
				return errors.New("the server stopped answering pings")
			}
			pings++
			l.push(ctx, wire.Frame{Type: wire.TypePing, ID: "ping-" + strconv.Itoa(pings)})
		case <-lctx.Done():
			// Frames read before the end are still good: store and ack them.
			var rest []wire.Frame
			for f := range frames {
				rest = append(rest, f)
			}
			if len(rest) > 0 && ctx.Err() == nil {
				s.handle(ctx, l, rest)
			}
			return context.Cause(lctx)
		}
	}
}
