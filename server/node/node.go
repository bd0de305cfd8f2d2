// Package node assembles a chatserver process: it picks the backends (embedded or
// production) from a Config, builds the Service and the HTTP handler, and serves.
// cmd/chatserver is a thin shell over it, and tests start nodes in-process.
package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/files"
	"github.com/chatterm/chat/server/httpd"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/server/webhook"
)

// Config is everything a node needs. cmd/chatserver fills it from flags and
// CHATSERVER_* variables; the defaults are the embedded, one-node backend.
type Config struct {
	Addr         string // listen address; default 127.0.0.1:8080 (":0" style picks a free port)
	DataDir      string // embedded data (SQLite file, blobs); default ./data
	PublicURL    string // how clients reach this node, for presigned blob URLs; default http(s)://<listen addr>
	Registration string // open, invite (default) or closed
	NodeID       string // default: random
	// TLS, when set, makes the API listener serve HTTPS with it (through its
	// GetCertificate, a CertFile's or an ACME manager's, or its Certificates);
	// nil: plain HTTP, for a proxy or load balancer that terminates TLS.
	TLS *tls.Config

	MaxMessageBytes int           // default 16 KiB
	SendRate        int           // sends per user per second; default 50; -1 disables
	MaxInFlight     int           // sends being stored at once before more are refused as overloaded; default 10,000
	PasswordCost    int           // bcrypt cost; default 10 (tests use 4)
	AuthRate        int           // logins and registrations per client address per second; default 10; -1 disables
	RedeliverAfter  time.Duration // delivery worker's grace period before a second try or a push; default 3 s
	TokenCacheTTL   time.Duration // how long a node answers a token from its cache; default 5 s, <0 off
	MaxHashing      int           // bcrypt runs at once; default max(1, cores/2)
	NoSync          bool          // SQLite synchronous=NORMAL: faster, loses the last commits on power loss
	ShutdownTimeout time.Duration // default 10 s
	ArchiveAfter    time.Duration // messages older than this move to blob storage; default 30 days; <0 keeps all hot
	ArchiveInterval time.Duration // how often the archiver runs; default 1 h
	// Media limits per user (docs/security.md; server.Config has the
	// defaults): storage quota and upload rate in bytes (-1: off), the
	// largest file, and how long an upload waits for its message.
	MediaQuota     int64
	MediaRate      int64
	MaxMediaBytes  int64
	MediaUnsentTTL time.Duration

	// FallbackWarnAfter: fallbacks (chat_fallbacks_total) taken in every check
	// (a sixth of this) for this long are logged at WARN, once, with the counts
	// by role; default 30 s, -1 off.
	FallbackWarnAfter time.Duration

	// Limits are the per-user limits on history pages, inbox loads, profile
	// writes, new direct conversations and member additions, per second
	// (server.UserLimits: 0 takes server.DefaultUserLimits, -1 disables one).
	Limits server.UserLimits

	// Exposure limits (docs/security.md). Live WebSockets per user and per
	// client address (0: httpd's defaults, -1: no cap), and in all (0: the
	// process's file limit less fdReserve, kept for health checks, logins and
	// plain requests; -1: no cap).
	SocketsPerUser int
	SocketsPerAddr int
	MaxSockets     int
	// TCP connections, every one counted (plain requests and WebSockets):
	// per client address (0: httpd.DefaultConnsPerAddr, -1: no cap) and in
	// all (0: the process's file limit less fdReserve; -1: no cap). A
	// connection past a cap is closed as soon as it is accepted.
	ConnsPerAddr int
	MaxConns     int
	// IdleTimeout closes a keep-alive connection that has sent no request for
	// this long; default 30 s. BodyTimeout bounds reading one request, its
	// headers and body (an upgraded WebSocket is not bound by it: it has its
	// own keep-alive); default 30 s.
	IdleTimeout time.Duration
	BodyTimeout time.Duration
	// /metrics: on MetricsAddr, a listener of its own without a token (bind it
	// to loopback or a private network); on the API listener only with
	// "Authorization: Bearer MetricsToken". Neither set: not served.
	MetricsAddr  string
	MetricsToken string

	Production Production

	PushURL   string // webhook for offline users ("{user}" is replaced); empty: push off
	PushToken string // bearer token for the webhook

	Logger *slog.Logger // default: discard
}

// Production selects the many-node backends; a zero value means embedded.
type Production struct {
	DynamoEndpoint string        // empty: AWS default for the region
	DynamoRegion   string        // required with DynamoDB
	TablePrefix    string        // prefix of every table name
	DynamoTimeout  time.Duration // bound on one DynamoDB call, retries included; 0: dynamo.DefaultCallTimeout
	CreateTables   bool          // create missing tables on start
	RedisAddrs     []string      // one address (a server, or a Cluster's configuration endpoint), or a Cluster's seeds
	RedisPassword  string
	RedisTLS       bool
	RedisPrefix    string // prefix of every Redis key
	S3Bucket       string
	S3Endpoint     string
	S3Region       string
	S3PathStyle    bool

	RedisMode string // auto (asks Redis: the default), single or cluster
	// RedisTimeout bounds one Redis call, its retry included, and each read,
	// write and dial within it two thirds of that; 0: the redis package's
	// defaults (150 ms, 100 ms).
	RedisTimeout time.Duration
	// RedisReplicaReads sends inbox and profile reads to replicas (in a
	// Cluster, its own; for a single server, RedisReplicaAddrs, which turn it on).
	RedisReplicaReads bool
	RedisReplicaAddrs []string
	// InboxTTL and ProfileTTL: how long an inbox nobody reads and a cached
	// profile stay in Redis; 0: the redis package's defaults (24 h, 1 h).
	InboxTTL   time.Duration
	ProfileTTL time.Duration
	// KafkaBrokers puts registry updates through KafkaTopic to registry
	// workers (server/kafka); empty: synchronous registry writes. Needs Redis.
	KafkaBrokers   []string
	KafkaTopic     string // empty: kafka.DefaultTopic
	KafkaApplyRate int    // updates/s each node's worker applies at most; 0: no cap
	// KafkaMaxAge: workers skip updates published longer ago (a replay of
	// the topic); 0: kafka.DefaultMaxAge.
	KafkaMaxAge        time.Duration
	KafkaTLS           bool
	KafkaSASLUser      string
	KafkaSASLPassword  string
	KafkaSASLMechanism string
}

// Enabled reports whether any production backend is configured.
func (p Production) Enabled() bool {
	return p.DynamoRegion != "" || p.DynamoEndpoint != "" || len(p.RedisAddrs) > 0 || p.S3Bucket != ""
}

// Node is a running chatserver.
type Node struct {
	cfg     Config
	stop    context.CancelFunc // ends background jobs (the archiver)
	jobs    sync.WaitGroup
	ln      net.Listener
	srv     *http.Server
	api     *httpd.Handler
	metrics *http.Server // on MetricsAddr; nil when not set
	mln     net.Listener
	svc     *server.Service
	engine  *protocol.Engine
	closers []io.Closer
	done    chan error
}

// Start opens the backends, listens and serves in the background.
func Start(ctx context.Context, cfg Config) (_ *Node, err error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "data"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	n := &Node{cfg: cfg, done: make(chan error, 1)}
	defer func() {
		if err != nil {
			n.closeBackends()
			if n.ln != nil {
				n.ln.Close()
			}
			if n.mln != nil {
				n.mln.Close()
			}
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	maxConns := cfg.MaxConns
	if maxConns == 0 {
		maxConns = fdBudget(cfg.Logger)
	}
	n.ln = httpd.Listen(ln, httpd.ConnLimits{PerAddr: cfg.ConnsPerAddr, Total: maxConns}, cfg.Logger)
	if n.cfg.PublicURL == "" {
		n.cfg.PublicURL = n.URL()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	b, err := n.openBackends(ctx, reg)
	if err != nil {
		return nil, err
	}
	if cfg.PushURL != "" {
		p, err := webhook.New(webhook.Config{URL: cfg.PushURL, Token: cfg.PushToken, Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		n.closers = append(n.closers, p)
		b.Pusher = p
	}
	metrics := server.NewMetrics(reg)
	n.svc, err = server.New(server.Config{
		Backends: b, NodeID: cfg.NodeID, Logger: cfg.Logger, Registration: cfg.Registration,
		MaxMessageBytes: cfg.MaxMessageBytes, SendRate: cfg.SendRate, PasswordCost: cfg.PasswordCost, MaxInFlight: cfg.MaxInFlight,
		AuthRate: cfg.AuthRate, Limits: cfg.Limits, MaxHashing: cfg.MaxHashing, RedeliverAfter: cfg.RedeliverAfter, TokenCacheTTL: cfg.TokenCacheTTL,
		MediaQuota: cfg.MediaQuota, MediaRate: cfg.MediaRate, MaxMediaBytes: cfg.MaxMediaBytes, MediaUnsentTTL: cfg.MediaUnsentTTL,
		Metrics: metrics,
	})
	if err != nil {
		return nil, err
	}
	jobCtx, stop := context.WithCancel(context.Background())
	n.stop = stop
	if cfg.FallbackWarnAfter >= 0 {
		if cfg.FallbackWarnAfter == 0 {
			cfg.FallbackWarnAfter = 30 * time.Second
		}
		w := &fallbackWatch{fallbacks: metrics.Fallbacks, every: cfg.FallbackWarnAfter / 6, after: cfg.FallbackWarnAfter, log: cfg.Logger}
		n.jobs.Go(func() { w.run(jobCtx) })
	}
	serveMetrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	maxSockets := cfg.MaxSockets
	if maxSockets == 0 {
		maxSockets = fdBudget(cfg.Logger)
	}
	n.engine = protocol.New(n.svc)
	handler := httpd.New(n.svc, n.engine, cfg.Logger, httpd.Options{Metrics: serveMetrics, MetricsToken: cfg.MetricsToken,
		SocketsPerUser: cfg.SocketsPerUser, SocketsPerAddr: cfg.SocketsPerAddr, MaxSockets: maxSockets})
	n.api = handler
	if cfg.MetricsAddr != "" {
		if n.mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return nil, fmt.Errorf("listen for metrics on %s: %w", cfg.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", serveMetrics)
		n.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go n.metrics.Serve(n.mln)
	}
	var root http.Handler = handler
	if fs, ok := b.Blobs.(*files.Store); ok {
		mux := http.NewServeMux()
		mux.Handle("/v1/blobs/", http.StripPrefix("/v1/blobs/", fs.Handler()))
		mux.Handle("/", handler)
		root = mux
	}
	if cfg.ArchiveAfter >= 0 {
		if cfg.ArchiveAfter == 0 {
			cfg.ArchiveAfter = 30 * 24 * time.Hour
		}
		if cfg.ArchiveInterval <= 0 {
			cfg.ArchiveInterval = time.Hour
		}
		n.jobs.Go(func() { n.svc.RunArchiver(jobCtx, cfg.ArchiveAfter, cfg.ArchiveInterval) })
	}
	n.jobs.Go(func() {
		if err := n.svc.ClaimNameKeys(jobCtx); err != nil && jobCtx.Err() == nil {
			cfg.Logger.Warn("claiming the name keys of older accounts", "err", err)
		}
	})
	if b.Blobs != nil {
		// A few passes per grace period: an unsent upload is deleted within
		// a quarter of it after it expires (each node sweeps; the records'
		// conditions make a second node's pass over the same upload a no-op).
		every := min(max(n.svc.MediaUnsentTTL()/4, time.Minute), time.Hour)
		n.jobs.Go(func() { n.svc.RunMediaSweeper(jobCtx, every) })
	}
	// Every connection is bounded in time as well as in number: a request's
	// headers in 10 s, the whole request in BodyTimeout (a body that never
	// ends held its connection forever), and a keep-alive connection between
	// requests for IdleTimeout. No write timeout: a media download may take
	// longer than any bound that suits a request.
	n.srv = &http.Server{Handler: root, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: cfg.BodyTimeout, IdleTimeout: cfg.IdleTimeout,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	go func() { n.done <- n.serve() }()
	attrs := []any{"addr", n.ln.Addr().String(), "url", n.URL(), "node", n.svc.NodeID(),
		"backend", map[bool]string{true: "production", false: "embedded"}[cfg.Production.Enabled()]}
	// The data directory only when something is kept there: the SQLite store
	// when DynamoDB is not used, the blobs when S3 is not.
	if p := cfg.Production; p.DynamoRegion == "" && p.DynamoEndpoint == "" || p.S3Bucket == "" {
		attrs = append(attrs, "data_dir", cfg.DataDir)
	}
	cfg.Logger.Info("chatserver listening", attrs...)
	n.firstRunHint(ctx)
	return n, nil
}

// firstRunHint says, on a server nobody has registered on yet, how its first
// account (its admin) is made: a fresh server otherwise prints only where it
// listens, and the default registration mode needs invites from an admin.
func (n *Node) firstRunHint(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := n.svc.FirstUser(ctx); !errors.Is(err, server.ErrNotFound) {
		return // claimed, or the store cannot say: nothing to add
	}
	then := "the admin makes invites (chat invite) for the others (chat register NAME --invite CODE)"
	switch n.svc.Config().Registration {
	case server.RegistrationOpen:
		then = "anyone may register after (--registration open)"
	case server.RegistrationClosed:
		then = "nobody else may register (--registration closed)"
	}
	n.cfg.Logger.Info("no account yet: the first to register becomes this server's admin",
		"register", "chat --server "+n.URL()+" register NAME", "then", then)
}

// Addr is the address the node listens on.
func (n *Node) Addr() string { return n.ln.Addr().String() }

// URL is the node's base URL, e.g. http://127.0.0.1:8080 (https:// with TLS).
func (n *Node) URL() string { return n.scheme() + "://" + n.ln.Addr().String() }

// Service is the node's chat service.
func (n *Node) Service() *server.Service { return n.svc }

// Done yields the serve error when the listener fails.
func (n *Node) Done() <-chan error { return n.done }

// Close shuts down gracefully: stops accepting, lets in-flight sends finish,
// closes sockets with a going-away code, then closes the backends.
func (n *Node) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
	defer cancel()
	// Stop new requests first; hijacked WebSockets are not waited on by Shutdown,
	// so the Service closes them itself.
	var errs []error
	if n.stop != nil {
		n.stop()
		n.jobs.Wait()
	}
	shutdownHTTP := make(chan error, 1)
	go func() { shutdownHTTP <- n.srv.Shutdown(ctx) }()
	if err := n.svc.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	if n.engine != nil {
		n.engine.Close() // its sweeps end with the Service
	}
	// In-flight sends are done. Give other requests a moment, then drop what is
	// left: Shutdown alone waits up to 5 s on connections that never sent a request.
	select {
	case err := <-shutdownHTTP:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		}
	case <-time.After(time.Second):
		n.srv.Close()
	}
	// The backends go last: a socket's read loop still calls into the Service
	// (Disconnect) after its close frame went out.
	if err := n.api.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	if n.metrics != nil {
		n.metrics.Close()
	}
	errs = append(errs, n.closeBackends())
	return errors.Join(errs...)
}

func (n *Node) closeBackends() error {
	var errs []error
	if n.stop != nil {
		n.stop()
		n.jobs.Wait()
	}
	for i := len(n.closers) - 1; i >= 0; i-- {
		errs = append(errs, n.closers[i].Close())
	}
	n.closers = nil
	return errors.Join(errs...)
}
