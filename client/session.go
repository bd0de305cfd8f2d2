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
	// PingInterval is how often an idle connection is pinged; a connection that
	// has said nothing for 2.5 intervals is dropped and redialled. Default 20s.
	PingInterval time.Duration
	// WriteTimeout bounds one frame write. Default 10s.
	WriteTimeout time.Duration
}

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

	mu      sync.Mutex
	link    *link                        // the live connection, nil when none
	waiters map[string][]chan sendResult // message_id -> Send calls waiting for "sent"
	reads   map[string]int64             // read boundaries not yet told to the server
	state   State
	syncSeq int
}

type sendResult struct {
	resp wire.SendResponse
	err  error
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
	cfg.Backoff = cfg.Backoff.withDefaults()
	s := &Session{
		api:     cfg.API,
		store:   cfg.Store,
		self:    cfg.Store.UserID(),
		log:     cfg.Logger,
		cfg:     cfg,
		events:  make(chan Event, cfg.EventBuffer),
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
	s := NewSession(SessionConfig{API: api, Store: store, Logger: cfg.logger()})
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
	attempt := 0
	s.setState(func(st *State) { st.Status, st.LoggedOut = Connecting, false })
	for {
		conn, err := Dial(ctx, s.api.Server(), s.api.Token(), s.api.hc)
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

	// Owned by the serve goroutine:
	acked  map[string]int64 // per conversation, the last ack sent
	syncs  map[string]bool  // ids of the sync requests of the round in flight
	round  map[string]int64 // the round's conversations and their cursors when asked
	more   bool             // an answer of this round was cut short
	gapped map[string]bool  // conversations to sync once the round ends
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
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l := &link{conn: conn, out: make(chan wire.Frame, 1024), ctx: lctx, cancel: cancel,
		sent: map[string]bool{}, acked: map[string]int64{}, gapped: map[string]bool{}}
	defer conn.CloseNow()

	// The writer: the only goroutine writing to the socket, so frames keep the
	// order they were queued in (a resent message before a newer one).
	go func() {
		for {
			select {
			case f := <-l.out:
				if s.log.Enabled(lctx, slog.LevelDebug) {
					s.log.Debug("frame out", "type", f.Type, "id", f.ID, "conversation", f.ConversationID, "seq", f.SeqNo)
				}
				wctx, wcancel := context.WithTimeout(lctx, s.cfg.WriteTimeout)
				err := conn.Write(wctx, f)
				wcancel()
				if err != nil {
					cancel(fmt.Errorf("write %s: %w", f.Type, err))
					return
				}
			case <-lctx.Done():
				return
			}
		}
	}()

	// The reader: always reading (coder/websocket's rule), handing frames over.
	frames := make(chan wire.Frame, 256)
	go func() {
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
			select {
			case frames <- f:
			case <-lctx.Done():
				return
			}
		}
	}()

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
	go s.refreshInbox(lctx)

	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	lastHeard := time.Now()
	pings := 0
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return context.Cause(lctx)
			}
			lastHeard = time.Now()
			batch := []wire.Frame{f}
		drain:
			for len(batch) < 500 {
				select {
				case f, ok := <-frames:
					if !ok {
						break drain
					}
					batch = append(batch, f)
				default:
					break drain
				}
			}
			if err := s.handle(ctx, l, batch); err != nil {
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

// startRound asks for every message after the given cursors (in several sync
// frames when there are more than wire.MaxCursors); "synced" answers end it.
func (s *Session) startRound(ctx context.Context, l *link, cursors []wire.Cursor) error {
	l.syncs, l.round, l.more = map[string]bool{}, map[string]int64{}, false
	if s.cfg.Filter != nil {
		kept := cursors[:0:0]
		for _, c := range cursors {
			if s.cfg.Filter(c.ConversationID) {
				kept = append(kept, c)
			}
		}
		cursors = kept
	}
	for _, c := range cursors {
		l.round[c.ConversationID] = c.SeqNo
	}
	for len(cursors) > 0 || len(l.syncs) == 0 {
		n := min(len(cursors), wire.MaxCursors)
		s.mu.Lock()
		s.syncSeq++
		id := "sync-" + strconv.Itoa(s.syncSeq)
		s.mu.Unlock()
		l.syncs[id] = true
		if !l.push(ctx, wire.Frame{Type: wire.TypeSync, ID: id, Cursors: cursors[:n]}) {
			return context.Cause(l.ctx)
		}
		cursors = cursors[n:]
	}
	return nil
}

// synced handles the answer that ends one sync request.
func (s *Session) synced(ctx context.Context, l *link, f wire.Frame) error {
	if !l.syncs[f.ID] {
		return nil
	}
	delete(l.syncs, f.ID)
	l.more = l.more || f.More
	if len(l.syncs) > 0 {
		return nil
	}
	if l.more {
		// An answer was cut at the server's budget: ask again from the cursors
		// we have now. Without progress (a hole in the server's numbering that
		// the answer did not get past) stop; the next connect tries again.
		var next []wire.Cursor
		progress := false
		for conv, was := range l.round {
			cur, _, err := s.store.Cursor(ctx, conv)
			if err != nil {
				return err
			}
			progress = progress || cur > was
			next = append(next, wire.Cursor{ConversationID: conv, SeqNo: cur})
		}
		if progress {
			return s.startRound(ctx, l, next)
		}
		s.log.Warn("sync makes no progress; leaving the rest for the next connect", "conversations", len(next))
		l.round = nil
		return nil
	}
	// The round is complete: the server has sent every message after each
	// cursor up to its newest, and every later one reaches this connection
	// live, in order. So whatever is missing below our newest cached message
	// does not exist (the server skipped that number), and the cursor may pass
	// it.
	round := l.round
	l.round = nil
	for conv := range round {
		top, err := s.store.LatestSeq(ctx, conv)
		if err != nil {
			return err
		}
		if err := s.store.AdvanceCursor(ctx, conv, top); err != nil {
			return err
		}
		if err := s.ack(ctx, l, conv); err != nil {
			return err
		}
	}
	if len(l.gapped) > 0 {
		var cs []wire.Cursor
		for conv := range l.gapped {
			cur, _, err := s.store.Cursor(ctx, conv)
			if err != nil {
				return err
			}
			cs = append(cs, wire.Cursor{ConversationID: conv, SeqNo: cur})
		}
		l.gapped = map[string]bool{}
		return s.startRound(ctx, l, cs)
	}
	return nil
}

// ack tells the server that a conversation is stored up to its cursor, unless
// this connection already said so.
func (s *Session) ack(ctx context.Context, l *link, conv string) error {
	cur, ok, err := s.store.Cursor(ctx, conv)
	if err != nil {
		return err
	}
	if ok && cur > l.acked[conv] {
		if !l.push(ctx, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: cur}) {
			return context.Cause(l.ctx)
		}
		l.acked[conv] = cur
	}
	return nil
}

// resendOutbox sends every unsent message with its original message_id; the
// server stores each once however often it arrives.
func (s *Session) resendOutbox(ctx context.Context, l *link) error {
	entries, err := s.store.Outbox(ctx, "")
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		s.log.Info("resending the outbox", "entries", len(entries))
	}
	for _, e := range entries {
		if e.Err != nil {
			continue
		}
		if s.cfg.Filter != nil && !s.cfg.Filter(e.ConversationID) {
			continue
		}
		s.sendOn(ctx, l, e)
	}
	return nil
}

// sendOn sends an outbox entry on a connection unless it already went there.
func (s *Session) sendOn(ctx context.Context, l *link, e localstore.OutboxEntry) {
	s.mu.Lock()
	if l.sent[e.MessageID] {
		s.mu.Unlock()
		return
	}
	l.sent[e.MessageID] = true
	s.mu.Unlock()
	if !l.push(ctx, wire.Frame{Type: wire.TypeSend, ID: e.MessageID, ConversationID: e.ConversationID,
		MessageID: e.MessageID, Content: e.Content, Attachment: e.Attachment}) {
		s.mu.Lock()
		delete(l.sent, e.MessageID)
		s.mu.Unlock()
	}
}

// handle applies a batch of frames in order. Consecutive messages are stored
// in one transaction, and only then acked: an ack means "stored here".
// Consecutive "sent" answers are applied in one transaction too.
func (s *Session) handle(ctx context.Context, l *link, batch []wire.Frame) error {
	var msgs []wire.Message
	var sents []wire.SendResponse
	var statuses []localstore.StatusUpdate
	touched := map[string]int64{} // conversation -> highest seq_no received
	flushMsgs := func() error {
		if len(msgs) == 0 {
			return nil
		}
		added, err := s.store.PutMessages(ctx, msgs...)
		if err != nil {
			// Not acked, so the server sends them again after the reconnect.
			return fmt.Errorf("store incoming messages: %w", err)
		}
		msgs = msgs[:0]
		type key struct{ conv, user string }
		senders := map[key]bool{}
		for _, m := range added {
			s.emit(ctx, MessageEvent{Message: m})
			if m.SenderID != s.self {
				senders[key{m.ConversationID, m.SenderID}] = true
			}
		}
		// A message implies its sender read everything before it (seed 004);
		// the server sends no status frame for that, so the ticks of our own
		// messages move here. The event carries the boundaries as cached.
		for k := range senders {
			sts, err := s.store.Statuses(ctx, k.conv)
			if err != nil {
				return err
			}
			for _, st := range sts {
				if st.UserID == k.user {
					s.emit(ctx, StatusEvent{ConversationID: k.conv, Status: st})
				}
			}
		}
		return nil
	}
	flushSents := func() error {
		if len(sents) == 0 {
			return nil
		}
		done, err := s.store.CompleteSends(ctx, sents...)
		if err != nil {
			return err
		}
		for i, d := range done {
			if d.Err != nil {
				s.log.Warn("sent answer not applied", "message_id", sents[i].MessageID, "err", d.Err)
				continue
			}
			if d.First {
				s.emit(ctx, SentEvent{Sent: sents[i], Message: d.Message})
			}
			s.resolve(sents[i].MessageID, sendResult{resp: sents[i]})
		}
		sents = sents[:0]
		s.refreshUnsent(ctx)
		return nil
	}
	flushStatuses := func() error {
		if len(statuses) == 0 {
			return nil
		}
		changed, err := s.store.ApplyStatuses(ctx, statuses...)
		if err != nil {
			return err
		}
		for i, u := range statuses {
			if changed[i] {
				s.emit(ctx, StatusEvent{ConversationID: u.ConversationID, Status: u.Status})
			}
		}
		statuses = statuses[:0]
		return nil
	}
	// Runs of one kind are applied together; a change of kind flushes the run
	// before, so everything takes effect in the order it arrived.
	kind := ""
	flush := func(next string) error {
		if next == kind {
			return nil
		}
		kind = next
		if err := flushMsgs(); err != nil {
			return err
		}
		if err := flushSents(); err != nil {
			return err
		}
		return flushStatuses()
	}
	for _, f := range batch {
		switch f.Type {
		case wire.TypeMessage:
			m := *f.Message
			if s.cfg.Filter != nil && !s.cfg.Filter(m.ConversationID) {
				continue
			}
			if m.MessageID == "" || m.SenderID == "" || wire.ValidateConversationID(m.ConversationID) != nil {
				s.log.Warn("skipping a malformed message", "conversation", m.ConversationID, "seq", m.SeqNo)
				continue
			}
			if err := flush(f.Type); err != nil {
				return err
			}
			msgs = append(msgs, m)
			touched[m.ConversationID] = max(touched[m.ConversationID], m.SeqNo)
		case wire.TypeSent:
			if err := flush(f.Type); err != nil {
				return err
			}
			sents = append(sents, wire.SendResponse{ConversationID: f.ConversationID, SeqNo: f.SeqNo, MessageID: f.MessageID, Timestamp: f.Timestamp})
		case wire.TypeStatus:
			if err := flush(f.Type); err != nil {
				return err
			}
			statuses = append(statuses, localstore.StatusUpdate{ConversationID: f.ConversationID, Status: *f.Status})
		default:
			if err := flush(f.Type); err != nil {
				return err
			}
			if err := s.handleOther(ctx, l, f); err != nil {
				return err
			}
		}
	}
	if err := flush(""); err != nil {
		return err
	}
	// Ack each touched conversation up to its cursor, duplicates included: a
	// redelivery means the server missed our earlier ack.
	for conv, top := range touched {
		if err := s.ack(ctx, l, conv); err != nil {
			return err
		}
		// A message beyond the cursor means a hole: a message this device
		// missed, or a number the server skipped. A sync of that conversation
		// tells which (after the round in flight, which may already cover it).
		if _, inRound := l.round[conv]; inRound {
			continue
		}
		if cur, _, err := s.store.Cursor(ctx, conv); err == nil && cur < top {
			l.gapped[conv] = true
		}
	}
	if len(l.gapped) > 0 && l.round == nil {
		var cs []wire.Cursor
		for conv := range l.gapped {
			cur, _, err := s.store.Cursor(ctx, conv)
			if err != nil {
				return err
			}
			cs = append(cs, wire.Cursor{ConversationID: conv, SeqNo: cur})
		}
		l.gapped = map[string]bool{}
		return s.startRound(ctx, l, cs)
	}
	return nil
}

func (s *Session) handleOther(ctx context.Context, l *link, f wire.Frame) error {
	switch f.Type {
	case wire.TypeSynced:
		return s.synced(ctx, l, f)
	case wire.TypeConversation:
		if err := s.store.PutConversation(ctx, *f.Conv); err != nil {
			s.log.Warn("store conversation", "err", err)
			return nil
		}
		s.emit(ctx, ConversationEvent{Conversation: *f.Conv})
	case wire.TypeError:
		s.handleError(ctx, l, f)
	case wire.TypePong, wire.TypeHello:
	default:
		s.log.Debug("ignoring frame", "type", f.Type)
	}
	return nil
}

func (s *Session) handleError(ctx context.Context, l *link, f wire.Frame) {
	if f.ID == "" {
		s.log.Warn("server error", "err", f.Error)
		return
	}
	if l.syncs[f.ID] {
		// One cursor was refused (we left that conversation); the rest of the
		// sync goes on, and "synced" still follows.
		s.log.Info("sync refused a cursor", "err", f.Error)
		return
	}
	s.mu.Lock()
	isSend := l.sent[f.ID]
	s.mu.Unlock()
	if !isSend {
		s.log.Warn("server error", "id", f.ID, "err", f.Error)
		return
	}
	s.log.Info("send refused", "message_id", f.ID, "err", f.Error)
	if f.Error.Code.Retryable() {
		// Rate limited or overloaded: send it again after the hint, on whatever
		// connection is up by then.
		wait := max(f.Error.RetryAfter(), 100*time.Millisecond)
		s.mu.Lock()
		delete(l.sent, f.ID)
		s.mu.Unlock()
		id := f.ID
		time.AfterFunc(wait, func() { s.retrySend(id) })
		return
	}
	if err := s.store.FailSend(ctx, f.ID, f.Error); err != nil && !errors.Is(err, localstore.ErrNotFound) {
		s.log.Warn("mark send failed", "err", err)
	}
	e, _ := s.outboxConversation(ctx, f.ID)
	s.emit(ctx, SendFailedEvent{ConversationID: e, MessageID: f.ID, Err: f.Error})
	s.refreshUnsent(ctx)
	s.resolve(f.ID, sendResult{err: f.Error})
}

func (s *Session) outboxConversation(ctx context.Context, messageID string) (string, error) {
	es, err := s.store.Outbox(ctx, "")
	if err != nil {
		return "", err
	}
	for _, e := range es {
		if e.MessageID == messageID {
			return e.ConversationID, nil
		}
	}
	return "", localstore.ErrNotFound
}

func (s *Session) retrySend(messageID string) {
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l == nil {
		return // the next connection resends the whole outbox
	}
	es, err := s.store.Outbox(l.ctx, "")
	if err != nil {
		return
	}
	for _, e := range es {
		if e.MessageID == messageID && e.Err == nil {
			s.sendOn(l.ctx, l, e)
		}
	}
}

func (s *Session) resolve(messageID string, r sendResult) {
	s.mu.Lock()
	ws := s.waiters[messageID]
	delete(s.waiters, messageID)
	s.mu.Unlock()
	for _, w := range ws {
		w <- r
	}
}

// refreshInbox merges the server's inbox into the cache after a connect, so
// names, previews and unread counts are current.
func (s *Session) refreshInbox(ctx context.Context) {
	resp, err := s.api.Inbox(ctx, 500)
	if err != nil {
		s.log.Info("refresh inbox", "err", err)
		return
	}
	entries := resp.Conversations
	if s.cfg.Filter != nil {
		kept := entries[:0]
		for _, e := range entries {
			if s.cfg.Filter(e.ConversationID) {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if err := s.store.PutInbox(ctx, entries...); err != nil {
		s.log.Warn("store inbox", "err", err)
		return
	}
	s.emit(ctx, InboxEvent{})
}

// Enqueue queues a message and returns at once: the outbox entry is durable
// before it returns, and the message goes out now if connected, else on the
// next connect. The returned message has seq_no 0 (pending) and the local
// time; a SentEvent follows when the server stored it.
func (s *Session) Enqueue(ctx context.Context, conversationID, content string) (wire.Message, error) {
	return s.EnqueueID(ctx, conversationID, wire.NewMessageID(), content)
}

// EnqueueID is Enqueue with the caller's message_id (idempotent: the same id and
// content again is the same message).
func (s *Session) EnqueueID(ctx context.Context, conversationID, messageID, content string) (wire.Message, error) {
	return s.EnqueueMessage(ctx, wire.Message{ConversationID: conversationID, MessageID: messageID, Content: content})
}

// EnqueueMessage is Enqueue for a message with an attachment (a media_id from
// API.UploadMedia; the content may then be empty). An empty MessageID gets a
// fresh one.
func (s *Session) EnqueueMessage(ctx context.Context, m wire.Message) (wire.Message, error) {
	if m.MessageID == "" {
		m.MessageID = wire.NewMessageID()
	}
	conversationID, messageID, content := m.ConversationID, m.MessageID, m.Content
	s.sendMu.Lock()
	e, err := s.store.EnqueueEntry(ctx, localstore.OutboxEntry{ConversationID: conversationID, MessageID: messageID,
		Content: content, Attachment: m.Attachment})
	if err != nil {
		s.sendMu.Unlock()
		return wire.Message{}, err
	}
	s.mu.Lock()
	l := s.link
	s.mu.Unlock()
	if l != nil {
		s.sendOn(ctx, l, e)
	}
	s.sendMu.Unlock()
	if l == nil {
		s.RetryNow()
	}
	s.refreshUnsent(ctx)
	return wire.Message{ConversationID: conversationID, MessageID: messageID, SenderID: s.self, Content: content,
		Attachment: e.Attachment, Timestamp: e.CreatedAt}, nil
}

// Send queues a message like Enqueue and waits until the server has stored it
// (or refused it for good, or ctx ends; the message then stays queued).
func (s *Session) Send(ctx context.Context, conversationID, content string) (wire.SendResponse, error) {
	return s.SendID(ctx, conversationID, wire.NewMessageID(), content)
}

// SendID is Send with the caller's message_id.
func (s *Session) SendID(ctx context.Context, conversationID, messageID, content string) (wire.SendResponse, error) {
	return s.SendMessage(ctx, wire.Message{ConversationID: conversationID, MessageID: messageID, Content: content})
}

// SendMessage is Send for a message that may carry an attachment; an empty
// MessageID gets a fresh one.
func (s *Session) SendMessage(ctx context.Context, m wire.Message) (wire.SendResponse, error) {
	if m.MessageID == "" {
		m.MessageID = wire.NewMessageID()
	}
	messageID := m.MessageID
	w := make(chan sendResult, 1)
	s.mu.Lock()
	s.waiters[messageID] = append(s.waiters[messageID], w)
	s.mu.Unlock()
	if _, err := s.EnqueueMessage(ctx, m); err != nil {
		s.dropWaiter(messageID, w)
		return wire.SendResponse{}, err
	}
	select {
	case r := <-w:
		return r.resp, r.err
	case <-ctx.Done():
		s.dropWaiter(messageID, w)
		return wire.SendResponse{}, fmt.Errorf("message %s is queued, not yet stored: %w", messageID, ctx.Err())
	}
}

func (s *Session) dropWaiter(messageID string, w chan sendResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.waiters[messageID]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(s.waiters, messageID)
	} else {
		s.waiters[messageID] = ws
	}
}

// MarkRead records that the user has seen a conversation up to seq: in the
// cache at once (unread counts drop), and on the server now or at the next
// connect.
func (s *Session) MarkRead(ctx context.Context, conversationID string, seq int64) error {
	if seq <= 0 {
		return nil
	}
	st := wire.MemberStatus{UserID: s.self, LastReadSeq: seq}
	changed, err := s.store.ApplyStatus(ctx, conversationID, st)
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	// The caller knows what it marked; the event is for other views, and must
	// not block a caller that is not draining Events.
	select {
	case s.events <- StatusEvent{ConversationID: conversationID, Status: st}:
	default:
	}
	s.mu.Lock()
	l := s.link
	if l == nil {
		s.reads[conversationID] = max(s.reads[conversationID], seq)
	}
	s.mu.Unlock()
	if l != nil && !l.push(ctx, wire.Frame{Type: wire.TypeRead, ConversationID: conversationID, SeqNo: seq}) {
		s.mu.Lock()
		s.reads[conversationID] = max(s.reads[conversationID], seq)
		s.mu.Unlock()
	}
	return nil
}
