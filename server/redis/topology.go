package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Mode says what Options.Addrs are.
type Mode string

const (
	// ModeAuto asks Redis (Open sends INFO cluster to the first address that
	// answers): a node with cluster_enabled:1 is a Cluster, whatever the number
	// of addresses, so the configuration endpoint of ElastiCache's cluster mode
	// works as one address. New, which does not contact Redis, takes one
	// address for a single server and several for a Cluster.
	ModeAuto Mode = "auto"
	// ModeSingle is one Redis server (a primary, maybe with replicas).
	ModeSingle Mode = "single"
	// ModeCluster is a Redis Cluster; the addresses are seeds.
	ModeCluster Mode = "cluster"
)

// ParseMode reads a --redis-mode value; empty is ModeAuto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeSingle, ModeCluster:
		return m, nil
	}
	return "", fmt.Errorf("redis mode %q: want auto, single or cluster", s)
}

// ErrConfig wraps the errors Open finds in the configuration rather than in
// Redis's health: a password Redis refuses, TLS on one side only, a Cluster
// taken for a single server or the reverse. A node must not start on them: every
// Redis role would take its fallback for as long as it runs, which looks like
// working.
var ErrConfig = errors.New("redis: configuration does not match the server")

// probeTimeout bounds each of Open's questions: longer than a call's, since a
// node starting should not give up on a Redis that is merely slow to accept.
const probeTimeout = 2 * time.Second

// Open is New, with the topology found out rather than guessed: in ModeAuto it
// asks Redis whether it is a Cluster; in the other modes it checks that Redis
// agrees. Then it pings through the client it built, and with ReplicaReads
// checks that there are replicas to read.
//
// Errors wrapping ErrConfig are the configuration's; a node should stop on them.
// When Redis does not answer at all, Open returns a usable Client (its
// topology, in ModeAuto, guessed from the number of addresses) and an error
// wrapping ErrUnavailable: the caller may start on the fallbacks, as for an
// outage. Any other error is returned with a nil Client.
func Open(ctx context.Context, o Options) (*Client, error) {
	if o.Mode == "" {
		o.Mode = ModeAuto
	}
	if _, err := ParseMode(string(o.Mode)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if len(o.Addrs) == 0 {
		return nil, errors.New("redis: no address")
	}
	if o.Mode == ModeSingle && len(o.Addrs) > 1 {
		return nil, fmt.Errorf("%w: mode single takes one address, got %d (%s): several addresses are a Cluster's seeds", ErrConfig, len(o.Addrs), strings.Join(o.Addrs, ","))
	}
	if o.ReplicaReads && o.Mode == ModeSingle && len(o.ReplicaAddrs) == 0 {
		return nil, fmt.Errorf("%w: replica reads on a single server need its replicas' addresses (--redis-replica-addrs)", ErrConfig)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	setLoggerOnce.Do(func() { goredis.SetLogger(slogPrintf{o.Logger}) })
	cluster, answered, err := probe(ctx, o)
	if err != nil {
		return nil, err
	}
	var down error
	switch {
	case answered == "":
		down = fmt.Errorf("%w: none of %s answered (if Redis requires TLS, set --redis-tls)", ErrUnavailable, strings.Join(o.Addrs, ","))
	case o.Mode == ModeSingle && cluster:
		return nil, fmt.Errorf("%w: %s is a Redis Cluster node (cluster_enabled:1), but the mode is single: keyed commands would be answered MOVED and every role would take its fallback; set --redis-mode cluster (or auto)", ErrConfig, answered)
	case o.Mode == ModeCluster && !cluster:
		return nil, fmt.Errorf("%w: %s is not a Redis Cluster node (cluster_enabled:0), but the mode is cluster; set --redis-mode single (or auto)", ErrConfig, answered)
	case o.Mode == ModeAuto && !cluster && len(o.Addrs) > 1:
		return nil, fmt.Errorf("%w: %s is not a Redis Cluster node, but %d addresses were given: give one (a single server), or the Cluster's", ErrConfig, answered, len(o.Addrs))
	case o.Mode == ModeAuto:
		o.Mode = map[bool]Mode{true: ModeCluster, false: ModeSingle}[cluster]
	}
	if o.ReplicaReads && o.Mode == ModeSingle && len(o.ReplicaAddrs) == 0 {
		return nil, fmt.Errorf("%w: replica reads on a single server need its replicas' addresses (--redis-replica-addrs)", ErrConfig)
	}
	c, err := New(o)
	if err != nil {
		return nil, err
	}
	if down != nil {
		return c, down // the caller says it, with what it does about it
	}
	if err := c.check(ctx); errors.Is(err, ErrUnavailable) {
		return c, err
	} else if err != nil {
		c.Close()
		return nil, err
	}
	c.log.Info("redis: connected", "mode", c.Mode(), "addrs", o.Addrs, "replica_reads", c.readsFromReplicas())
	return c, nil
}

// probe asks the addresses in turn, each with a plain connection, whether it
// is a Cluster node, and returns the first answer and who gave it. Nobody
// answering is not an error (answered is empty); a refused password or a TLS
// mismatch is (ErrConfig): they would fail the same way on every call.
func probe(ctx context.Context, o Options) (cluster bool, answered string, _ error) {
	for _, a := range o.Addrs {
		rc := goredis.NewClient(&goredis.Options{Addr: a, Username: o.Username, Password: o.Password, TLSConfig: o.TLS,
			DialTimeout: probeTimeout, ReadTimeout: probeTimeout, WriteTimeout: probeTimeout, MaxRetries: -1, DialerRetries: 1, PoolSize: 1})
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		info, err := rc.Info(pctx, "cluster").Result()
		cancel()
		rc.Close()
		if err == nil {
			return strings.Contains(info, "cluster_enabled:1"), a, nil
		}
		if isConfigError(err) {
			return false, "", fmt.Errorf("%w: %s: %w", ErrConfig, a, explain(err, o))
		}
		// TLS on one side only does not fail as such: a plain Redis waits for
		// the end of a line that a TLS hello never sends (a timeout), and a TLS
		// port drops a plain command (EOF). Ask in the other language.
		if other := speaksOtherwise(ctx, a, o.TLS != nil); other != nil {
			return false, "", fmt.Errorf("%w: %s: %w (%w)", ErrConfig, a, other, err)
		}
	}
	return false, "", nil
}

// speaksOtherwise says whether addr answers without TLS when tlsAsked, or with
// TLS when not, and if so what to change.
func speaksOtherwise(ctx context.Context, addr string, tlsAsked bool) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil // not answering at all: an outage, not a mismatch
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl)
	if !tlsAsked {
		host, _, _ := net.SplitHostPort(addr)
		// Only whether a handshake completes: the certificate is checked
		// when the node connects for real, with --redis-tls.
		tc := tls.Client(conn, &tls.Config{ServerName: host, InsecureSkipVerify: true}) //nolint:gosec // a probe, sends nothing
		if tc.HandshakeContext(ctx) == nil {
			return errors.New("Redis wants TLS: set --redis-tls")
		}
		return nil
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return nil
	}
	var b [1]byte
	if _, err := conn.Read(b[:]); err == nil && (b[0] == '+' || b[0] == '-') {
		return errors.New("TLS asked, but Redis answers in plain TCP: drop --redis-tls, or enable in-transit encryption")
	}
	return nil
}

// check pings through the client as built (in a Cluster, every master it
// routes to) and, with replica reads, makes sure there is a replica to read.
// Only a configuration error is returned (ErrConfig); a primary not answering
// now wraps ErrUnavailable, and a replica not answering is logged: reads go
// to the primary meanwhile.
func (c *Client) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var err error
	if cc, ok := c.rdb.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() })
	} else {
		err = c.rdb.Ping(ctx).Err()
	}
	if err != nil {
		return c.checkErr(err)
	}
	if c.reads != nil {
		n := 0
		err := c.reads.ForEachShard(ctx, func(ctx context.Context, s *goredis.Client) error {
			role, err := s.Do(ctx, "ROLE").Slice()
			if err == nil && len(role) > 0 && role[0] == "slave" {
				n++
			}
			return err
		})
		switch {
		case err != nil && isConfigError(err):
			return c.checkErr(err)
		case err != nil:
			c.log.Warn("redis: a cluster node does not answer; its reads go to another", "err", err)
		case n == 0:
			c.log.Warn("redis: replica reads asked, but the cluster has no replicas: reads go to the masters")
		}
	}
	for _, r := range c.replicas {
		role, err := r.Do(ctx, "ROLE").Slice()
		switch {
		case err != nil && isConfigError(err):
			return c.checkErr(fmt.Errorf("replica %s: %w", r.Options().Addr, err))
		case err != nil:
			c.log.Warn("redis: a replica does not answer; its reads go to the primary until it does", "addr", r.Options().Addr, "err", err)
		case len(role) > 0 && role[0] != "slave":
			// A reader endpoint may resolve to the primary when it has no
			// replica: reads still work, they only do not offload it.
			c.log.Warn("redis: a replica address answers as a primary: reads there do not offload the primary", "addr", r.Options().Addr, "role", role[0])
		}
	}
	return nil
}

func (c *Client) checkErr(err error) error {
	if isConfigError(err) {
		return fmt.Errorf("%w: %w", ErrConfig, explain(err, c.o))
	}
	return fmt.Errorf("%w: at start: %w", ErrUnavailable, err)
}

// isConfigError: the answer of a Redis that refuses these credentials, or a
// TLS handshake that cannot succeed (plain TCP to a TLS port fails as an EOF or
// a reset, which an outage also gives: that one is reported as unreachable,
// with a hint).
func isConfigError(err error) bool {
	var rh tls.RecordHeaderError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var ae tls.AlertError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &rh) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &ae) || errors.As(err, &cv) {
		return true
	}
	for _, p := range []string{"WRONGPASS", "NOAUTH", "NOPERM", "ERR AUTH", "ERR invalid password", "ERR Client sent AUTH"} {
		if goredis.HasErrorPrefix(err, p) || strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// explain adds what to change to a configuration error.
func explain(err error, o Options) error {
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &rh):
		return fmt.Errorf("TLS asked, but Redis answers in plain TCP: drop --redis-tls, or enable in-transit encryption: %w", err)
	case strings.Contains(err.Error(), "x509") || strings.Contains(err.Error(), "tls:"):
		return fmt.Errorf("TLS handshake failed: %w", err)
	case o.Password == "":
		return fmt.Errorf("Redis wants a password (CHATSERVER_REDIS_PASSWORD): %w", err)
	}
	return fmt.Errorf("Redis refuses this password (CHATSERVER_REDIS_PASSWORD): %w", err)
}

// Mode is the topology the client was built for: ModeSingle or ModeCluster.
func (c *Client) Mode() Mode {
	if _, ok := c.rdb.(*goredis.ClusterClient); ok {
		return ModeCluster
	}
	return ModeSingle
}

// readsFromReplicas: inbox and profile reads go to replicas.
func (c *Client) readsFromReplicas() bool { return c.reads != nil || len(c.replicas) > 0 }

// reader is where a read that may be stale goes: a replica when replica reads
// are on, the primary otherwise.
func (c *Client) reader() goredis.Cmdable {
	switch {
	case c.reads != nil:
		return c.reads
	case len(c.replicas) > 0:
		return c.replicas[rand.IntN(len(c.replicas))]
	}
	return c.rdb
}

// read runs f on a replica (see reader) and, if that replica is down, once
// more on the primary: a lost replica must not open the breaker for the roles
// that never read from it.
func (c *Client) read(ctx context.Context, op string, f func(context.Context, goredis.Cmdable) error) error {
	return c.do(ctx, op, func(ctx context.Context) error {
		r := c.reader()
		err := f(ctx, r)
		if err != nil && r != goredis.Cmdable(c.rdb) && len(c.replicas) > 0 && isFailure(err) && ctx.Err() == nil {
			err = f(ctx, c.rdb)
		}
		return err
	})
}
