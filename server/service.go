package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
	"runtime"
)

// Backends is the set of implementations a Service runs on. cmd/chatserver picks
// the embedded or the production set by configuration.
type Backends struct {
	Store     Store
	Sequencer Sequencer
	Rate      RateLimiter
	Inbox     InboxIndex
	Profiles  ProfileCache
	Registry  Registry
	Broker    Broker
	// Revocations is optional: nil caches no token (every request reads
	// its token from the store).
	Revocations Revocations
	Blobs       BlobStore
	Pusher      Pusher // optional: nil turns push notifications off
	// SendPath is optional: nil calls the roles above one by one.
	SendPath SendPath
	// InboxCopies is optional: nil keeps no copy of users' inboxes, and the
	// inbox fails while the store cannot be read (inbox_copy.go).
	InboxCopies InboxCopies
}

// Registration modes.
const (
	RegistrationOpen   = "open"
	RegistrationInvite = "invite"
	RegistrationClosed = "closed"
)

// Config configures a Service. Zero values get the defaults noted on each field.
type Config struct {
	Backends
	NodeID          string       // unique per process; default random
	Logger          *slog.Logger // default: discard
	Now             func() time.Time
	Registration    string        // open, invite (default) or closed
	MaxMessageBytes int           // content limit in bytes; default 16 KiB
	SendRate        int           // sends per user per second; default 50; <0 disables
	TokenTTL        time.Duration // default 30 days
	// TokenCacheTTL is how long a node answers a token from its cache
	// (tokens.go) before reading it from the store again; default 5 s, <0
	// turns the cache off. Without Backends.Revocations nothing is cached.
	TokenCacheTTL time.Duration
	InviteTTL     time.Duration // default 7 days
	SendBuffer    int           // frames queued per connection before it is closed as slow; default 512
	PasswordCost  int           // bcrypt cost; default bcrypt.DefaultCost (tests lower it)
	MaxInFlight   int           // sends being stored at once before new ones get "overloaded"; default 10000
	// AuthRate bounds logins and registrations per client address per second
	// (docs/security.md); default 10; <0 disables (tests and benchmarks that
	// register many users from one address).
	AuthRate int
	// RedeliverAfter is the delivery worker's grace period: a message still
	// unacked by a connected recipient this long after it was stored is sent
	// again, and one for a recipient with no connection anywhere is pushed
	// (after a second check). Default 3 s.
	RedeliverAfter time.Duration
	// MaxHashing bounds bcrypt runs at once, so a login spray can take at most
	// this many cores from sends; default max(1, GOMAXPROCS/2).
	MaxHashing int
	// Limits are the per-user limits on reads and writes other than sends.
	Limits UserLimits
	// Media limits per user (docs/security.md): the bytes of recorded
	// uploads (default 1 GiB), the sustained upload rate in bytes per second
	// after a burst of two largest files (default 2 MiB/s), the largest
	// file (default 32 MiB), and how long an upload may wait for the message
	// that carries it before it is deleted (default 24 h, at least the
	// upload URL's 15 minutes). MediaQuota or MediaRate < 0 turns it off.
	MediaQuota     int64
	MediaRate      int64
	MaxMediaBytes  int64
	MediaUnsentTTL time.Duration
	Metrics        *Metrics // default: a private registry
}

func (c *Config) setDefaults() error {
	if c.Store == nil || c.Sequencer == nil || c.Rate == nil || c.Inbox == nil || c.Profiles == nil || c.Registry == nil || c.Broker == nil {
		return errors.New("server: every backend but Blobs is required")
	}
	if c.SendPath == nil {
		c.SendPath = rolesPath{c.Backends}
	}
	if c.NodeID == "" {
		c.NodeID = "node-" + rand.Text()[:10]
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch c.Registration {
	case "":
		c.Registration = RegistrationInvite
	case RegistrationOpen, RegistrationInvite, RegistrationClosed:
	default:
		return fmt.Errorf("server: registration mode %q is not open, invite or closed", c.Registration)
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 16 << 10
	}
	if c.MediaQuota == 0 {
		c.MediaQuota = 1 << 30
	}
	if c.MediaRate == 0 {
		c.MediaRate = 2 << 20
	}
	if c.MaxMediaBytes <= 0 {
		c.MaxMediaBytes = 32 << 20
	}
	if c.MediaUnsentTTL <= 0 {
		c.MediaUnsentTTL = 24 * time.Hour
	}
	// An upload URL works for uploadURLTTL: an upload swept before then
	// could still be PUT, and its bytes would be stored with no record.
	c.MediaUnsentTTL = max(c.MediaUnsentTTL, uploadURLTTL+time.Minute)
	if c.SendRate == 0 {
		c.SendRate = 50
	}
	c.Limits.setDefaults(c.SendRate < 0)
	if c.TokenTTL <= 0 {
		c.TokenTTL = 30 * 24 * time.Hour
	}
	if c.TokenCacheTTL == 0 {
		c.TokenCacheTTL = 5 * time.Second
	}
	if c.InviteTTL <= 0 {
		c.InviteTTL = 7 * 24 * time.Hour
	}
	if c.SendBuffer <= 0 {
		c.SendBuffer = 512
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 10000
	}
	if c.RedeliverAfter <= 0 {
		c.RedeliverAfter = 3 * time.Second
	}
	if c.AuthRate == 0 {
		c.AuthRate = 10
	}
	if c.MaxHashing <= 0 {
		c.MaxHashing = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	return nil
}

// Service is the chat application: accounts, conversations, the send path,
// delivery, boundaries and this node's connections (a conn.Hub). The protocol
// engine (server/protocol) serves WebSocket frames over it; the transport
// (HTTP, WebSocket) lives in server/httpd.
type Service struct {
	cfg       Config
	store     Store
	storeID   string // the store's identity as read at start (IdentityStore)
	log       *slog.Logger
	metrics   *Metrics
	hub       *conn.Hub
	locks     stripedLocks
	members   memberCache
	copyDrops copyDrops // failed Drops of inbox copies, retried
	lastSeq   lastSeqCache
	tokens    *tokenCache        // nil: every token is read from the store
	loads     singleflight.Group // profile loads: one per user id at a time
	pw        *passwords
	due       dueList     // messages the delivery worker checks (redeliver.go)
	unsure    sync.Map    // sends answered maybe_stored, not yet fanned out (refanout.go)
	resyncing atomic.Bool // a resyncSoon is pending
	onLost    atomic.Pointer[func()]

	archiveStepHook func(step string) // tests: called between the archiver's writes (archive.go)

	admit    sync.RWMutex    // orders wg.Add against Shutdown's Wait
	closing  atomic.Bool     // Shutdown has begun: no new work
	inFlight atomic.Int64    // sends between admission and answer
	ctx      context.Context // ends at Shutdown
	cancel   context.CancelFunc
	wg       sync.WaitGroup // in-flight sends and per-connection workers
	bg       sync.WaitGroup // background jobs that end with ctx
}

// New builds a Service and subscribes it to its node's broker channel.
func New(cfg Config) (*Service, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	// The store's identity goes into every hello: read once, since it
	// changes only under a stopped node (a restore, or a rollback followed
	// by rotate-store-id and a restart). Reading it also refuses a store a
	// newer build made, before anything is served from it.
	idCtx, idCancel := context.WithTimeout(context.Background(), 30*time.Second)
	storeID, err := cfg.Store.StoreID(idCtx)
	idCancel()
	if err != nil {
		return nil, fmt.Errorf("read the store's identity: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{storeID: storeID,
		cfg: cfg, store: cfg.Store, log: cfg.Logger, metrics: cfg.Metrics,
		hub: conn.NewHub(), ctx: ctx, cancel: cancel,
		members: newMemberCache(5 * time.Second), lastSeq: newLastSeqCache(),
	}
	s.pw = newPasswords(cfg.MaxHashing, s.passwordCost(), cfg.Metrics)
	s.locks.seed = maphash.MakeSeed()
	if err := cfg.Broker.Subscribe(ctx, cfg.NodeID, s.onEnvelope); err != nil {
		cancel()
		return nil, fmt.Errorf("subscribe node %s: %w", cfg.NodeID, err)
	}
	if cfg.Revocations != nil {
		if cfg.TokenCacheTTL > 0 {
			s.tokens = newTokenCache(cfg.TokenCacheTTL, cfg.Revocations)
		}
		s.members.rev = cfg.Revocations
		if err := cfg.Revocations.Subscribe(ctx, s.onRevocation); err != nil {
			cancel()
			return nil, fmt.Errorf("subscribe to token revocations: %w", err)
		}
	}
	if k, ok := cfg.Registry.(NodeKeeper); ok {
		// The keeper asks for the live connections only to put entries back that
		// the registry lost; while they were missing, other nodes took this
		// node's users for offline and published nothing here.
		// Its first restore is the first heartbeat of a node new to the
		// registry (no marker yet): nothing was missed then.
		var first atomic.Bool
		first.Store(true)
		restored := func() []Presence {
			if !first.CompareAndSwap(true, false) {
				s.resyncSoon()
			}
			conns := s.hub.All()
			out := make([]Presence, len(conns))
			for i, c := range conns {
				out[i] = Presence{UserID: c.UserID, ConnID: c.ID, NodeID: cfg.NodeID}
			}
			return out
		}
		s.bg.Go(func() { k.Keep(ctx, cfg.NodeID, restored) })
	}
	s.bg.Go(s.runRedeliver)
	return s, nil
}

// NodeID is this process's id in the connection registry.
func (s *Service) NodeID() string { return s.cfg.NodeID }

// StoreID is the store's identity as read at start, which the hello frame
// tells every client (docs/protocol.md, "Store identity").
func (s *Service) StoreID() string { return s.storeID }

// Config returns the effective configuration (defaults filled in).
func (s *Service) Config() Config { return s.cfg }

// Shutdown stops accepting work, waits for in-flight sends (until ctx ends),
// closes every connection with a going-away code, and drops this node from the
// registry. It does not close the backends: their owner does.
func (s *Service) Shutdown(ctx context.Context) error {
	s.admit.Lock()
	s.closing.Store(true)
	s.admit.Unlock()
	s.hub.CloseAll(conn.CloseGoingAway, "server shutting down")
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("shutdown: in-flight work did not finish: %w", ctx.Err())
	}
	s.cancel()
	s.bg.Wait()
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if derr := s.cfg.Registry.DropNode(dctx, s.cfg.NodeID); derr != nil {
		s.log.Warn("drop node from registry", "node", s.cfg.NodeID, "err", derr)
	}
	return err
}

// stripedLocks serialise sends per conversation, so seq_no assignment, the
// queueing of the store write and the hand-off to connections happen in one
// order.
type stripedLocks struct {
	seed    maphash.Seed
	stripes [4096]stripe
}

// stripe is the lock of the conversations that hash to it. A send whose write
// is queued (storeQueued) lets go of the lock before its write is durable, and
// hands its messages to connections later: turn is closed once the newest
// such send of the stripe has done so, and the next send of the stripe hands
// its own over only after that, so connections still get a conversation's
// messages in seq order.
type stripe struct {
	sync.Mutex
	turn chan struct{} // nil: no queued send ahead
}

func (l *stripedLocks) lock(key string) *stripe {
	st := &l.stripes[maphash.String(l.seed, key)%uint64(len(l.stripes))]
	st.Lock()
	return st
}

// waitTurn returns once the stripe's queued sends ahead have handed their
// messages to connections. The caller holds the lock.
func (st *stripe) waitTurn() {
	if st.turn != nil {
		<-st.turn
		st.turn = nil
	}
}

// takeTurn makes the caller the stripe's newest queued send: it returns the
// turn to wait for before handing messages over (nil: none) and the one to
// close after. The caller holds the lock.
func (st *stripe) takeTurn() (prev, mine chan struct{}) {
	prev, mine = st.turn, make(chan struct{})
	st.turn = mine
	return prev, mine
}

// internal wraps an error that is not the request's fault for the client. A
// backend outage (ErrUnavailable) is not logged here: the backend's circuit
// breaker logs it once, and a line per request would bury the log. Anything
// else is unexpected and logged.
func (s *Service) internal(op string, err error) error {
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		return err
	}
	timedOut := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	if timedOut && !errors.Is(err, ErrNotApplied) {
		// A write that timed out may have been made: every 503 says when to
		// retry. (Not a deadline that passed before anything was sent.) A
		// send's write is answered by sendFailed, never here.
		s.log.Debug(op, "err", err)
		return &wire.Error{Code: wire.CodeUnavailable, RetryAfterMs: 1000,
			Message: op + " timed out and may have taken effect; retry after the hint"}
	}
	if errors.Is(err, ErrUnavailable) || timedOut {
		s.log.Debug(op, "err", err)
	} else {
		s.log.Error(op, "err", err)
	}
	return &wire.Error{Code: wire.CodeUnavailable, Message: op + " failed: a backing service is unavailable; try again", RetryAfterMs: 1000}
}

// sendFailed answers a send whose write failed with what is known of it:
// maybe_stored unless the store says nothing was written (ErrNotApplied),
// since a write that timed out or lost its answer may have been made; and
// unavailable, saying the message is not stored, when nothing was. Either
// way the client resends with the same message_id after the hint, and it is
// stored once. A wire error (a refusal on the message's merits) is answered
// as it is.
func (s *Service) sendFailed(err error) error {
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		return err
	}
	quiet := errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	if quiet {
		s.log.Debug("store message", "err", err)
	} else {
		s.log.Error("store message", "err", err)
	}
	if errors.Is(err, ErrNotApplied) {
		// Not internal's answer: a deadline that passed before the write was
		// sent would be told as "may have taken effect", which it did not.
		return &wire.Error{Code: wire.CodeUnavailable, RetryAfterMs: 1000,
			Message: "storing the message failed before anything was written: it is not stored; send it again with the same message_id after the hint"}
	}
	return &wire.Error{Code: wire.CodeMaybeStored, RetryAfterMs: 1000,
		Message: "storing the message failed without an answer: it may be stored; resend it with the same message_id after the hint (it is stored once)"}
}

// begin admits one unit of work (a send, a connection's worker) unless Shutdown
// has begun; the caller ends it with s.wg.Done.
func (s *Service) begin() bool {
	s.admit.RLock()
	defer s.admit.RUnlock()
	if s.closing.Load() {
		return false
	}
	s.wg.Add(1)
	return true
}
