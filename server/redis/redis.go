// Package redis implements the fast roles (docs/architecture.md) on Redis (go-redis v9:
// a single server or a Cluster, which Open finds out by asking; see Mode), so that
// several chatserver nodes share them.
//
// Every key starts with Options.Prefix. Keys carry a hash tag on the id they
// belong to ("{conv}", "{user}"), so a Cluster keeps each one's keys in one slot
// and the multi-command writes on one key can be MULTI/EXEC or a script.
//
// Every call goes through a circuit breaker: when Redis is down, calls fail
// within CallTimeout (150 ms by default) and, once the circuit is open, at
// once, so the Service can take its fallbacks (rate limiting fails open, the
// sequence comes from Store.NextSeq, the inbox from Store.Inbox).
package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/breaker"
)

// Options configure a Client. Zero fields take the defaults in brackets.
type Options struct {
	// Addrs is host:port of a single Redis, or the seed list of a Cluster (one
	// address, such as a configuration endpoint, is enough).
	Addrs []string
	// Mode says which [ModeAuto: Open asks Redis; New counts the addresses].
	Mode     Mode
	Username string
	Password string
	DB       int         // single server only
	TLS      *tls.Config // nil: plain TCP (ElastiCache with in-transit encryption needs it)

	// ReplicaReads sends the reads that may be a little stale, inbox and
	// profile reads, to replicas [off]: in a Cluster to a replica of the key's
	// shard (its master when none is healthy), on a single server to one of
	// ReplicaAddrs (the primary when that one is down). Counters, rate limits,
	// the registry and every write stay on the primaries: they are read to be
	// changed, and a stale answer there is a wrong seq_no or a missed delivery.
	ReplicaReads bool
	// ReplicaAddrs are a single server's replicas, or a reader endpoint that
	// spreads over them; setting them turns ReplicaReads on. Not for a Cluster,
	// whose replicas the client finds.
	ReplicaAddrs []string

	// Prefix starts every key and channel, e.g. "chat:" [none].
	Prefix string

	// Timeouts kept short so a dead Redis costs little per call: it is a cache
	// and a counter service, and every role has a fallback [100ms each].
	DialTimeout  time.Duration
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	// CallTimeout bounds a whole call, its one retry included [150ms].
	CallTimeout time.Duration
	PoolSize    int // connections per node [go-redis: 10 per CPU]

	Breaker BreakerOptions
	// Registerer receives the breaker state gauge (nil: not exported).
	Registerer prometheus.Registerer

	// InboxSize bounds each user's inbox sorted set [1000].
	InboxSize int
	// InboxTTL drops an inbox nobody read or filled for this long [24h].
	InboxTTL time.Duration
	// ProfileTTL and ProfileJitter: a cached profile lives TTL plus up to Jitter
	// [1h, a tenth of the TTL: 6m].
	ProfileTTL    time.Duration
	ProfileJitter time.Duration

	// HeartbeatEvery is how often a node marks itself alive in the registry; a
	// node silent for three times this is dead and its connections are dropped [5s].
	HeartbeatEvery time.Duration

	Logger *slog.Logger // [slog.Default()]: for dropped pub/sub messages
}

// Client is a connection to Redis shared by the roles. Build the roles with its
// methods: Sequencer, RateLimiter, InboxIndex, ProfileCache, Registry, Broker.
type Client struct {
	rdb goredis.UniversalClient
	// reads, in a Cluster with replica reads, is a second client routing
	// read-only commands to replicas: rdb, which the counters and the registry
	// use, never does. replicas are a single server's.
	reads    *goredis.ClusterClient
	replicas []*goredis.Client
	// movedOnce: a single-server client answered MOVED (see do).
	movedOnce sync.Once
	prefix    string
	cb        *breaker.Breaker
	o         Options
	log       *slog.Logger
}

// ErrUnavailable wraps every error caused by Redis being unreachable or its
// circuit being open, so callers can tell "take the fallback" from a bad request.
var ErrUnavailable = fmt.Errorf("redis: %w", server.ErrUnavailable)

// New returns a Client. It does not contact Redis: the server starts, and falls
// back, while Redis is down; use Ping to check at startup.
func New(o Options) (*Client, error) {
	if len(o.Addrs) == 0 {
		return nil, errors.New("redis: no address")
	}
	switch o.Mode {
	case "", ModeAuto:
		o.Mode = map[bool]Mode{true: ModeCluster, false: ModeSingle}[len(o.Addrs) > 1]
	case ModeSingle, ModeCluster:
	default:
		return nil, fmt.Errorf("redis: mode %q: want auto, single or cluster", o.Mode)
	}
	if o.Mode == ModeSingle && len(o.Addrs) > 1 {
		return nil, fmt.Errorf("redis: mode single takes one address, got %d", len(o.Addrs))
	}
	if len(o.ReplicaAddrs) > 0 {
		if o.Mode == ModeCluster {
			return nil, errors.New("redis: replica addresses are for a single server: a Cluster's replicas are found by the client (turn on replica reads)")
		}
		o.ReplicaReads = true
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 100 * time.Millisecond
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 100 * time.Millisecond
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 100 * time.Millisecond
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 150 * time.Millisecond
	}
	if o.InboxSize <= 0 {
		o.InboxSize = 1000
	}
	if o.InboxTTL <= 0 {
		o.InboxTTL = 24 * time.Hour
	}
	if o.ProfileTTL <= 0 {
		o.ProfileTTL = time.Hour
	}
	if o.ProfileJitter <= 0 {
		o.ProfileJitter = o.ProfileTTL / 10
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// go-redis logs through one package-level logger (dial failures, pub/sub
	// reconnects): send it to the first Client's logger at debug level, where an
	// outage does not flood the log; the breaker and the fallbacks report it.
	setLoggerOnce.Do(func() { goredis.SetLogger(slogPrintf{o.Logger}) })
	c := &Client{prefix: o.Prefix, o: o, log: o.Logger}
	var err error
	if c.cb, err = breaker.New("redis", o.Breaker, breakerDefaults, o.Registerer, o.Logger, isFailure, isExcluded); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	// One retry, soon: it replaces a pooled connection that died with a
	// restarted Redis; more would only delay the fallback.
	conn := func(addr string) *goredis.Options {
		return &goredis.Options{Addr: addr, Username: o.Username, Password: o.Password, DB: o.DB, TLSConfig: o.TLS,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			PoolSize: o.PoolSize, PoolTimeout: o.ReadTimeout,
			MaxRetries: 1, MinRetryBackoff: 2 * time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond,
			DialerRetries: 1, DialerRetryTimeout: 5 * time.Millisecond, ContextTimeoutEnabled: true}
	}
	if o.Mode == ModeCluster {
		co := func(readOnly bool) *goredis.ClusterOptions {
			x := conn("")
			return &goredis.ClusterOptions{Addrs: o.Addrs, Username: x.Username, Password: x.Password, TLSConfig: x.TLSConfig,
				DialTimeout: x.DialTimeout, ReadTimeout: x.ReadTimeout, WriteTimeout: x.WriteTimeout,
				PoolSize: x.PoolSize, PoolTimeout: x.PoolTimeout,
				MaxRetries: x.MaxRetries, MinRetryBackoff: x.MinRetryBackoff, MaxRetryBackoff: x.MaxRetryBackoff,
				DialerRetries: x.DialerRetries, DialerRetryTimeout: x.DialerRetryTimeout, ContextTimeoutEnabled: true,
				// Plain ReadOnly, no RouteRandomly or RouteByLatency: those
				// pick among the master and its replicas, and the point is to
				// take reads off the master.
				ReadOnly: readOnly}
		}
		c.rdb = goredis.NewClusterClient(co(false))
		if o.ReplicaReads {
			c.reads = goredis.NewClusterClient(co(true))
		}
	} else {
		c.rdb = goredis.NewClient(conn(o.Addrs[0]))
		for _, a := range o.ReplicaAddrs {
			c.replicas = append(c.replicas, goredis.NewClient(conn(a)))
		}
	}
	return c, nil
}

var setLoggerOnce sync.Once

type slogPrintf struct{ l *slog.Logger }

func (p slogPrintf) Printf(ctx context.Context, format string, v ...any) {
	p.l.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}

// Close closes the connections.
func (c *Client) Close() error {
	errs := []error{c.rdb.Close()}
	if c.reads != nil {
		errs = append(errs, c.reads.Close())
	}
	for _, r := range c.replicas {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that Redis answers.
func (c *Client) Ping(ctx context.Context) error {
	return c.do(ctx, "ping", func(ctx context.Context) error { return c.rdb.Ping(ctx).Err() })
}

// Roles sets b's fast roles (all but Store, Blobs and Pusher) and its SendPath
// to this client's, so that they share one connection pool and one circuit
// breaker, and the SendPath works on the roles' keys.
func (c *Client) Roles(b *server.Backends) {
	b.Sequencer, b.Rate, b.Inbox, b.Profiles, b.Registry, b.Broker =
		c.Sequencer(), c.RateLimiter(), c.InboxIndex(), c.ProfileCache(), c.Registry(), c.Broker()
	b.SendPath, b.Revocations, b.InboxCopies = c.SendPath(), c.Revocations(), c.InboxCopies()
}

// Prefix starts every key and channel of this client.
func (c *Client) Prefix() string { return c.prefix }

// Universal is the underlying client, for tests and tools.
func (c *Client) Universal() goredis.UniversalClient { return c.rdb }

// key builds "<prefix><kind>:{<id>}".
func (c *Client) key(kind, id string) string {
	var b strings.Builder
	b.Grow(len(c.prefix) + len(kind) + len(id) + 3)
	b.WriteString(c.prefix)
	b.WriteString(kind)
	b.WriteString(":{")
	b.WriteString(id)
	b.WriteByte('}')
	return b.String()
}

// do runs f through the circuit breaker.
func (c *Client) do(ctx context.Context, op string, f func(context.Context) error) error {
	done, err := c.cb.Allow()
	if err != nil {
		// Open, or half-open with its probes taken: fail at once.
		return fmt.Errorf("redis %s: %w: %w", op, ErrUnavailable, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	err = f(ctx)
	cancel()
	done(err)
	if err == nil || errors.Is(err, goredis.Nil) {
		return err
	}
	if isFailure(err) {
		if isMoved(err) && c.Mode() == ModeSingle {
			c.movedOnce.Do(func() {
				c.log.Error("redis answers MOVED: it is a Redis Cluster, but this node talks to it as a single server, so every Redis role takes its fallback; set --redis-mode cluster (or auto with Redis answering at start)", "op", op, "err", err)
			})
		}
		return fmt.Errorf("redis %s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("redis %s: %w", op, err)
}

// isMoved: a Cluster's redirection reached the caller, which only a client
// built for a single server lets through (a Cluster client follows it).
func isMoved(err error) bool {
	return goredis.HasErrorPrefix(err, "MOVED") || goredis.HasErrorPrefix(err, "ASK") || goredis.HasErrorPrefix(err, "CROSSSLOT")
}

// BreakerState is the circuit breaker's state, for tests and health checks.
func (c *Client) BreakerState() gobreaker.State { return c.cb.State() }

// isFailure says whether err means Redis (not the request) is in trouble: network
// errors, timeouts, and the replies of a server that cannot serve now.
func isFailure(err error) bool {
	if err == nil || errors.Is(err, goredis.Nil) || errors.Is(err, context.Canceled) {
		return false
	}
	var rerr goredis.Error
	if errors.As(err, &rerr) {
		return goredis.IsLoadingError(err) || goredis.IsReadOnlyError(err) || goredis.IsClusterDownError(err) ||
			goredis.IsTryAgainError(err) || goredis.IsMasterDownError(err) || goredis.IsOOMError(err) ||
			goredis.IsMaxClientsError(err) || goredis.HasErrorPrefix(err, "BUSY") ||
			// A Cluster taken for a single server: no call on another
			// shard's key will work, which is an outage to the roles.
			isMoved(err)
	}
	// Anything else is the connection's: refused, reset, EOF, timeouts, pool
	// exhausted.
	return true
}

// isExcluded: the caller gave up; that says nothing about Redis.
func isExcluded(err error) bool { return errors.Is(err, context.Canceled) }
