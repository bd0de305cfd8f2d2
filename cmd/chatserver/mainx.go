package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/internal/procs"
	"github.com/chatterm/chat/server/node"
)

var errHelp = errors.New("help requested")

// Main is the chatserver program, testable in-process: ParseFlags, Run, Close.
type Main struct {
	Config node.Config
	stderr io.Writer
	node   *node.Node

	logLevel      string
	logFormat     string
	adaptiveProcs bool

	// Stdout is where --version prints; nil: os.Stdout.
	Stdout io.Writer
	tls    tlsSetup // tls.go
}

// NewMain returns a Main with the defaults.
func NewMain(stderr io.Writer) *Main { return &Main{stderr: stderr} }

// envFlag is a flag with a CHATSERVER_* environment equivalent; the flag wins.
type envFlag struct {
	name, env, usage string
	set              func(string) error
	def              string
}

// ParseFlags reads flags, then CHATSERVER_* variables for flags not given.
func (m *Main) ParseFlags(args []string, getenv func(string) string) error {
	c := &m.Config
	fs := flag.NewFlagSet("chatserver", flag.ContinueOnError)
	fs.SetOutput(m.stderr)
	str := func(p *string) func(string) error { return func(v string) error { *p = v; return nil } }
	integer := func(p *int) func(string) error {
		return func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("not an integer: %q", v)
			}
			*p = n
			return nil
		}
	}
	boolean := func(p *bool) func(string) error {
		return func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("not true or false: %q", v)
			}
			*p = b
			return nil
		}
	}
	duration := func(p *time.Duration) func(string) error {
		return func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("not a duration like 720h: %q", v)
			}
			*p = d
			return nil
		}
	}
	byteSize := func(p *int64) func(string) error {
		return func(v string) error {
			n, err := parseBytes(v)
			if err != nil {
				return err
			}
			*p = n
			return nil
		}
	}
	list := func(p *[]string) func(string) error {
		return func(v string) error {
			*p = nil
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					*p = append(*p, s)
				}
			}
			return nil
		}
	}
	p := &c.Production
	flags := []envFlag{
		{"addr", "CHATSERVER_ADDR", "listen address", str(&c.Addr), "127.0.0.1:8080"},
		{"data-dir", "CHATSERVER_DATA_DIR", "directory of the embedded backend's data", str(&c.DataDir), "data"},
		{"public-url", "CHATSERVER_PUBLIC_URL", "URL clients use to reach this server (for media links); default http://<addr>", str(&c.PublicURL), ""},
		{"registration", "CHATSERVER_REGISTRATION", "who may register: open, invite or closed (the first account is always allowed and becomes admin)", str(&c.Registration), "invite"},
		{"node-id", "CHATSERVER_NODE_ID", "this node's id in the connection registry (default random)", str(&c.NodeID), ""},
		{"max-message-bytes", "CHATSERVER_MAX_MESSAGE_BYTES", "largest message content in bytes", integer(&c.MaxMessageBytes), "16384"},
		{"send-rate", "CHATSERVER_SEND_RATE", "messages per user per second (-1: no per-user limits on sends, group creation or media requests)", integer(&c.SendRate), "50"},
		{"history-rate", "CHATSERVER_HISTORY_RATE", "history pages per user per second (-1: unlimited)", integer(&c.Limits.History), "30"},
		{"inbox-rate", "CHATSERVER_INBOX_RATE", "inbox loads per user per second (-1: unlimited)", integer(&c.Limits.Inbox), "5"},
		{"profile-rate", "CHATSERVER_PROFILE_RATE", "profile changes (name, status, presence) per user per second (-1: unlimited)", integer(&c.Limits.ProfileWrites), "2"},
		{"conversation-rate", "CHATSERVER_CONVERSATION_RATE", "new direct conversations per user per second; finding an existing one is not counted (-1: unlimited)", integer(&c.Limits.Conversations), "5"},
		{"member-add-rate", "CHATSERVER_MEMBER_ADD_RATE", "requests adding members to a group per user per second (-1: unlimited)", integer(&c.Limits.MemberAdds), "5"},
		{"max-in-flight", "CHATSERVER_MAX_IN_FLIGHT", "sends being stored at once before more are refused with an overloaded error and a retry hint", integer(&c.MaxInFlight), "10000"},
		{"auth-rate", "CHATSERVER_AUTH_RATE", "logins and registrations per client address per second (-1: unlimited; behind a reverse proxy every client shares the proxy's address)", integer(&c.AuthRate), "10"},
		{"max-hashing", "CHATSERVER_MAX_HASHING", "password hashes (bcrypt) run at once; 0: half the CPUs, at least 1", integer(&c.MaxHashing), "0"},
		{"sockets-per-user", "CHATSERVER_SOCKETS_PER_USER", "live WebSockets one user may hold (0: 32; -1: no cap)", integer(&c.SocketsPerUser), "0"},
		{"sockets-per-addr", "CHATSERVER_SOCKETS_PER_ADDR", "live WebSockets one client address may hold (0: 256; -1: no cap)", integer(&c.SocketsPerAddr), "0"},
		{"max-sockets", "CHATSERVER_MAX_SOCKETS", "live WebSockets in all (0: the open-file limit less 1024 kept for health checks, logins and requests; -1: no cap)", integer(&c.MaxSockets), "0"},
		{"conns-per-addr", "CHATSERVER_CONNS_PER_ADDR", "TCP connections (plain requests and WebSockets) one client address, or IPv6 /64, may hold; more are closed at accept (0: 512; -1: no cap)", integer(&c.ConnsPerAddr), "0"},
		{"max-conns", "CHATSERVER_MAX_CONNS", "TCP connections in all (0: the open-file limit less 1024 kept for the stores and backends; -1: no cap)", integer(&c.MaxConns), "0"},
		{"idle-timeout", "CHATSERVER_IDLE_TIMEOUT", "close a keep-alive HTTP connection idle this long", duration(&c.IdleTimeout), "30s"},
		{"body-timeout", "CHATSERVER_BODY_TIMEOUT", "time to read one HTTP request, headers and body (not WebSockets, nor media uploads to the embedded blob store, which get 4m)", duration(&c.BodyTimeout), "30s"},
		{"metrics-addr", "CHATSERVER_METRICS_ADDR", "serve /metrics without a token on a listener of its own at this address, e.g. 127.0.0.1:9090 (empty: none)", str(&c.MetricsAddr), ""},
		{"metrics-token", "CHATSERVER_METRICS_TOKEN", "serve /metrics on the API address to requests with Authorization: Bearer <token> (empty: not served there; prefer the environment variable)", str(&c.MetricsToken), ""},
		{"media-quota", "CHATSERVER_MEDIA_QUOTA", "media one user may store, sent or not yet (bytes, or with KiB, MiB, GiB; -1: no quota)", byteSize(&c.MediaQuota), "1GiB"},
		{"media-rate", "CHATSERVER_MEDIA_RATE", "media one user may upload per second, after a burst of two largest files (bytes, or with KiB, MiB, GiB; -1: no limit)", byteSize(&c.MediaRate), "2MiB"},
		{"max-media-bytes", "CHATSERVER_MAX_MEDIA_BYTES", "largest upload (bytes, or with KiB, MiB, GiB)", byteSize(&c.MaxMediaBytes), "32MiB"},
		{"media-unsent-ttl", "CHATSERVER_MEDIA_UNSENT_TTL", "an upload no message carries this long after it was requested is deleted, and stops counting against the quota (at least 16m)", duration(&c.MediaUnsentTTL), "24h"},
		{"redeliver-after", "CHATSERVER_REDELIVER_AFTER", "delivery worker: a message still unacked by a connected recipient this long after it was stored is sent again; one for a recipient with no connection anywhere is pushed after a second check", duration(&c.RedeliverAfter), "3s"},
		{"token-cache-ttl", "CHATSERVER_TOKEN_CACHE_TTL", "how long a node answers a bearer token from its cache instead of the store; revocations reach every node at once, and a node that cannot hear them caches nothing; negative turns the cache off", duration(&c.TokenCacheTTL), "5s"},
		{"no-sync", "CHATSERVER_NO_SYNC", "embedded: do not fsync every commit (faster; a power loss may lose acknowledged messages)", boolean(&c.NoSync), "false"},
		{"archive-after", "CHATSERVER_ARCHIVE_AFTER", "move messages older than this to blob storage (cold tier; e.g. 720h; -1s keeps all hot)", duration(&c.ArchiveAfter), "720h"},
		{"push-url", "CHATSERVER_PUSH_URL", "webhook notified of messages for offline users, ntfy-style; {user} is replaced by the user id (empty: off)", str(&c.PushURL), ""},
		{"push-token", "CHATSERVER_PUSH_TOKEN", "bearer token sent to the push webhook (prefer the environment variable)", str(&c.PushToken), ""},
		{"adaptive-procs", "CHATSERVER_ADAPTIVE_PROCS", "run Go code on as few processors as the load needs, one when it is light: less CPU per message at moderate load (off when GOMAXPROCS is set)", boolean(&m.adaptiveProcs), "true"},
		{"log-level", "CHATSERVER_LOG_LEVEL", "debug, info, warn or error", str(&m.logLevel), "info"},
		{"log-format", "CHATSERVER_LOG_FORMAT", "text or json", str(&m.logFormat), "text"},
		{"dynamodb-endpoint", "CHATSERVER_DYNAMODB_ENDPOINT", "DynamoDB endpoint URL (default: AWS for the region)", str(&p.DynamoEndpoint), ""},
		{"dynamodb-region", "CHATSERVER_DYNAMODB_REGION", "AWS region of DynamoDB; setting it selects DynamoDB", str(&p.DynamoRegion), ""},
		{"table-prefix", "CHATSERVER_TABLE_PREFIX", "prefix of every DynamoDB table name", str(&p.TablePrefix), "chat_"},
		{"create-tables", "CHATSERVER_CREATE_TABLES", "create missing DynamoDB tables on start", boolean(&p.CreateTables), "false"},
		{"dynamodb-timeout", "CHATSERVER_DYNAMODB_TIMEOUT", "bound on one DynamoDB call, its retries included: a call slower than this fails, and counts as DynamoDB failing (5 in a row open the circuit breaker) unless DynamoDB answered other calls meanwhile", duration(&p.DynamoTimeout), "1s"},
		{"redis-addrs", "CHATSERVER_REDIS_ADDRS", "Redis address (a server, or a Redis Cluster's configuration endpoint), or comma-separated Redis Cluster addresses; setting it selects Redis", list(&p.RedisAddrs), ""},
		{"redis-mode", "CHATSERVER_REDIS_MODE", "what --redis-addrs are: auto (ask Redis at start whether it is a Cluster), single or cluster; a mode Redis contradicts stops the node", str(&p.RedisMode), "auto"},
		{"redis-replica-reads", "CHATSERVER_REDIS_REPLICA_READS", "read inboxes and cached profiles from replicas (a Cluster's own, or --redis-replica-addrs'); counters, rate limits and the registry always go to the primaries", boolean(&p.RedisReplicaReads), "false"},
		{"redis-replica-addrs", "CHATSERVER_REDIS_REPLICA_ADDRS", "a single Redis server's replicas, or its reader endpoint, comma-separated; setting them turns on replica reads (not for a Cluster)", list(&p.RedisReplicaAddrs), ""},
		{"redis-inbox-ttl", "CHATSERVER_REDIS_INBOX_TTL", "an inbox nobody reads leaves Redis after this long (raise it above a day for a known event, so the next morning's readers find theirs warm)", duration(&p.InboxTTL), "24h"},
		{"redis-profile-ttl", "CHATSERVER_REDIS_PROFILE_TTL", "a cached profile leaves Redis after this long, plus up to a tenth of it at random", duration(&p.ProfileTTL), "1h"},
		{"redis-timeout", "CHATSERVER_REDIS_TIMEOUT", "bound on one Redis call, its one retry included (each read, write and dial: two thirds of it); a Redis slower than this counts as failing and the call takes its fallback", duration(&p.RedisTimeout), "150ms"},
		{"redis-password", "CHATSERVER_REDIS_PASSWORD", "Redis password (prefer the environment variable)", str(&p.RedisPassword), ""},
		{"redis-tls", "CHATSERVER_REDIS_TLS", "connect to Redis over TLS", boolean(&p.RedisTLS), "false"},
		{"redis-prefix", "CHATSERVER_REDIS_PREFIX", "prefix of every Redis key", str(&p.RedisPrefix), "chat:"},
		{"kafka-brokers", "CHATSERVER_KAFKA_BROKERS", "Kafka bootstrap brokers, comma-separated; setting them puts registry updates through a topic to registry workers (needs --redis-addrs); empty: registry writes are synchronous, no queue", list(&p.KafkaBrokers), ""},
		{"kafka-topic", "CHATSERVER_KAFKA_TOPIC", "topic of registry updates (created if missing; its consumer group is the topic's name with -workers)", str(&p.KafkaTopic), "chat-registry"},
		{"kafka-apply-rate", "CHATSERVER_KAFKA_APPLY_RATE", "registry updates per second each node's worker applies at most: a storm then reaches Redis at that pace and waits in the topic meanwhile; 0: no cap", integer(&p.KafkaApplyRate), "0"},
		{"kafka-max-age", "CHATSERVER_KAFKA_MAX_AGE", "registry workers skip updates published longer ago than this (a replay of the topic after a consumer group lost its offsets): past a day the Redis registry no longer holds the versions that make a replayed update harmless", duration(&p.KafkaMaxAge), "24h"},
		{"kafka-tls", "CHATSERVER_KAFKA_TLS", "connect to Kafka over TLS (Amazon MSK's TLS and SASL listeners)", boolean(&p.KafkaTLS), "false"},
		{"kafka-sasl-user", "CHATSERVER_KAFKA_SASL_USER", "SASL user for Kafka (empty: no SASL)", str(&p.KafkaSASLUser), ""},
		{"kafka-sasl-password", "CHATSERVER_KAFKA_SASL_PASSWORD", "SASL password for Kafka (prefer the environment variable)", str(&p.KafkaSASLPassword), ""},
		{"kafka-sasl-mechanism", "CHATSERVER_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512 (MSK's), SCRAM-SHA-256 or PLAIN", str(&p.KafkaSASLMechanism), "SCRAM-SHA-512"},
		{"s3-bucket", "CHATSERVER_S3_BUCKET", "S3 bucket for media and cold messages; setting it selects S3", str(&p.S3Bucket), ""},
		{"s3-endpoint", "CHATSERVER_S3_ENDPOINT", "S3 endpoint URL (default: AWS)", str(&p.S3Endpoint), ""},
		{"s3-region", "CHATSERVER_S3_REGION", "AWS region of the bucket", str(&p.S3Region), ""},
		{"s3-path-style", "CHATSERVER_S3_PATH_STYLE", "path-style S3 addressing (S3-compatible servers)", boolean(&p.S3PathStyle), "false"},
	}
	flags = append(flags, m.tls.flags()...)
	for _, f := range flags {
		if err := f.set(f.def); err != nil {
			return err
		}
		usage := fmt.Sprintf("%s (env %s, default %q)", f.usage, f.env, f.def)
		if f.def == "true" || f.def == "false" {
			// A switch: --no-sync alone means true, as with the flag package's own.
			fs.BoolFunc(f.name, usage, f.set)
		} else {
			fs.Func(f.name, usage, f.set)
		}
	}
	versionAsked := versionFlag(fs)
	fs.Usage = func() {
		fmt.Fprintf(m.stderr, "Usage: chatserver [flags]\n       chatserver backup [--data-dir DIR] FILE\n       chatserver restore [--data-dir DIR] [--force] FILE\n       chatserver rotate-store-id [--data-dir DIR | --dynamodb-region R ...]\n\nServes the chat API on --addr. With no flags: the embedded backend under ./data.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return err
	}
	if versionAsked() {
		fmt.Fprint(m.stdout(), versionText())
		return errHelp
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; see chatserver --help", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, f := range flags {
		if v := getenv(f.env); v != "" && !given[f.name] {
			if err := f.set(v); err != nil {
				return fmt.Errorf("%s: %w", f.env, err)
			}
		}
	}
	switch c.Registration {
	case "open", "invite", "closed":
	default:
		return fmt.Errorf("--registration must be open, invite or closed, not %q", c.Registration)
	}
	if c.IdleTimeout <= 0 || c.BodyTimeout <= 0 {
		return fmt.Errorf("--idle-timeout and --body-timeout must be above zero, not %s and %s", c.IdleTimeout, c.BodyTimeout)
	}
	if c.MaxInFlight < 1 {
		return fmt.Errorf("--max-in-flight must be at least 1, not %d", c.MaxInFlight)
	}
	// A listen address is checked here, with the other flags, so a mistake in
	// it is a usage error (exit 2) and not a failure to start (exit 1).
	for _, a := range []struct{ flag, addr string }{{"--addr", c.Addr}, {"--metrics-addr", c.MetricsAddr}} {
		if err := checkListenAddr(a.addr); a.addr != "" && err != nil {
			return fmt.Errorf("%s %q: %w", a.flag, a.addr, err)
		}
	}
	if err := m.tls.check(); err != nil {
		return err
	}
	return nil
}

func (m *Main) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(m.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch m.logFormat {
	case "text", "":
		return slog.New(slog.NewTextHandler(m.stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(m.stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", m.logFormat)
}

// Run starts the server and returns once it is listening.
func (m *Main) Run(ctx context.Context) error {
	log, err := m.logger()
	if err != nil {
		return err
	}
	m.Config.Logger = log
	m.Config.ShutdownTimeout = 10 * time.Second
	if err := m.tls.start(&m.Config, log); err != nil {
		return err
	}
	m.node, err = node.Start(ctx, m.Config)
	if err != nil {
		m.tls.close()
		return err
	}
	m.tls.serve(m.node.Addr(), m.Config.PublicURL, log)
	return nil
}

// AdaptProcs runs the process on as few processors (GOMAXPROCS) as its load
// needs (internal/procs) until stop is called, unless --adaptive-procs=false
// or the GOMAXPROCS variable is set: then the count stands. It is the
// process's setting, so the binary calls it and Run does not: tests run
// several Mains in one process.
func (m *Main) AdaptProcs() (stop func()) {
	if !m.adaptiveProcs {
		return func() {}
	}
	log := m.Config.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return procs.Adapt(procs.Options{Logger: log})
}

// Addr is the listening address (useful with --addr 127.0.0.1:0).
func (m *Main) Addr() string { return m.node.Addr() }

// Done yields an error if serving stops by itself.
func (m *Main) Done() <-chan error { return m.node.Done() }

// Close shuts the server down gracefully.
func (m *Main) Close() error {
	defer m.tls.close()
	if m.node == nil {
		return nil
	}
	// Said before and after: a shutdown waits for sends in flight and for
	// sockets to close, and an operator watching the log should see it begin
	// and end (a SIGTERM used to leave no line at all).
	log := m.Config.Logger
	log.Info("chatserver shutting down: finishing sends in flight, closing connections (clients reconnect)")
	start := time.Now()
	err := m.node.Close()
	if err != nil {
		log.Error("chatserver shutdown", "err", err, "took", time.Since(start).Round(time.Millisecond))
		return err
	}
	log.Info("chatserver stopped", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// checkListenAddr checks a host:port to listen on: the port a number from 0
// to 65535 or a known service name.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want host:port, e.g. 127.0.0.1:8080 or :8080")
	}
	if n, err := strconv.ParseUint(port, 10, 64); err == nil {
		if n > 65535 {
			return fmt.Errorf("port %d is above 65535", n)
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("port %q is neither a number nor a known service", port)
	}
	return nil
}

// parseBytes reads a size: a number of bytes, or one with a KiB, MiB or GiB
// suffix ("32MiB"); -1 means off.
func parseBytes(v string) (int64, error) {
	num, mult := v, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			num, mult = s, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < -1 || n == -1 && mult != 1 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("not a size like 1GiB, 512KiB or 1048576 (or -1): %q", v)
	}
	return n * mult, nil
}
