package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chatterm/chat/internal/dirlock"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/files"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/server/s3"
	"github.com/chatterm/chat/server/sqlite"
)

// openBackends picks each role's implementation: DynamoDB or SQLite for the
// tables, Redis or in-process state for the fast roles, S3 or files for blobs.
// Several nodes need all three production ones; a single node may mix.
func (n *Node) openBackends(ctx context.Context, reg prometheus.Registerer) (server.Backends, error) {
	var b server.Backends
	p := n.cfg.Production
	log := n.cfg.Logger

	if p.DynamoRegion != "" || p.DynamoEndpoint != "" {
		st, err := dynamo.Open(ctx, dynamo.Options{TablePrefix: p.TablePrefix, Region: p.DynamoRegion, Endpoint: p.DynamoEndpoint,
			CallTimeout: p.DynamoTimeout, Registerer: reg, Logger: log})
		if err != nil {
			return b, fmt.Errorf("dynamodb: %w", err)
		}
		n.closers = append(n.closers, st)
		if p.CreateTables {
			if err := st.CreateTables(ctx); err != nil {
				return b, fmt.Errorf("dynamodb: create tables: %w", err)
			}
		}
		b.Store = st
	} else {
		if err := usableDir(n.cfg.DataDir, log); err != nil {
			return b, err
		}
		// One process per data directory: a second chatserver, or a restore,
		// on it would corrupt what the first has open.
		lock, err := dirlock.Acquire(n.cfg.DataDir)
		if errors.Is(err, dirlock.ErrHeld) {
			return b, fmt.Errorf("--data-dir %s is in use by another chatserver (or a restore): stop it first", n.cfg.DataDir)
		}
		if err != nil {
			return b, err
		}
		n.closers = append(n.closers, lock) // closed last: after the store
		st, err := sqlite.Open(filepath.Join(n.cfg.DataDir, "chat.db"), sqlite.Options{NoSync: n.cfg.NoSync, Registerer: reg})
		if err != nil {
			return b, fmt.Errorf("open the database in %s: %w", n.cfg.DataDir, err)
		}
		n.closers = append(n.closers, st)
		b.Store = st
	}

	if len(p.RedisAddrs) > 0 {
		mode, err := redis.ParseMode(p.RedisMode)
		if err != nil {
			return b, fmt.Errorf("--redis-mode: %w", err)
		}
		o := redis.Options{Addrs: p.RedisAddrs, Mode: mode, Password: p.RedisPassword, Prefix: p.RedisPrefix,
			ReplicaReads: p.RedisReplicaReads, ReplicaAddrs: p.RedisReplicaAddrs,
			InboxTTL: p.InboxTTL, ProfileTTL: p.ProfileTTL, Registerer: reg, Logger: log}
		if p.RedisTLS {
			o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if p.RedisTimeout > 0 {
			o.CallTimeout = p.RedisTimeout
			o.DialTimeout, o.ReadTimeout, o.WriteTimeout = p.RedisTimeout*2/3, p.RedisTimeout*2/3, p.RedisTimeout*2/3
		}
		// Open asks Redis what it is. A configuration Redis refuses (password,
		// TLS, a Cluster taken for a single server) stops the node: it would run
		// with every Redis role on its fallback, which looks like working. Redis
		// not answering is an outage the fallbacks are for: start degraded.
		rc, err := redis.Open(ctx, o)
		switch {
		case errors.Is(err, redis.ErrUnavailable) && rc != nil:
			hint := ""
			if mode == redis.ModeAuto {
				hint = "; its topology could not be asked, so it is taken from the number of addresses (" + string(rc.Mode()) + "): set --redis-mode to say it"
			}
			log.Warn("redis is not answering; starting with its fallbacks"+hint, "err", err)
		case err != nil:
			return b, fmt.Errorf("--redis-addrs %s: %w", strings.Join(p.RedisAddrs, ","), err)
		}
		n.closers = append(n.closers, rc)
		rc.Roles(&b)
		if err := n.openRegistryQueue(ctx, &b, reg); err != nil {
			return b, err
		}
	} else {
		if len(p.KafkaBrokers) > 0 {
			return b, errors.New("--kafka-brokers needs --redis-addrs: the queue feeds the registry that nodes share, and without Redis each node has its own")
		}
		b.Sequencer, b.Rate, b.Inbox = inmem.NewSequencer(), inmem.NewRateLimiter(time.Now), inmem.NewInboxIndex(1000)
		b.Profiles = inmem.NewProfileCache(time.Hour, 6*time.Minute, time.Now)
		b.Registry, b.Broker, b.Revocations = inmem.NewRegistry(), inmem.NewBroker(), inmem.NewRevocations()
	}

	if p.S3Bucket != "" {
		bs, err := s3.Open(ctx, s3.Options{Bucket: p.S3Bucket, Region: p.S3Region, Endpoint: p.S3Endpoint, PathStyle: p.S3PathStyle,
			Registerer: reg, Logger: log})
		if err != nil {
			return b, fmt.Errorf("s3: %w", err)
		}
		// A bucket that is not there is a mistake to say at start, not at the
		// first upload (which would fail as something else). S3 not answering
		// is an outage: start, and let the breaker ride it out.
		if err := bs.CheckBucket(ctx); errors.Is(err, s3.ErrNoBucket) {
			return b, fmt.Errorf("--s3-bucket %s: it does not exist, or these credentials may not use it: create it, or fix --s3-region/--s3-endpoint: %w", p.S3Bucket, err)
		} else if err != nil {
			log.Warn("s3 is not answering; starting anyway (media and archived messages wait for it)", "err", err)
		}
		b.Blobs = bs
	} else {
		if err := privateDir(n.cfg.DataDir, log); err != nil {
			return b, err
		}
		bs, err := files.Open(filepath.Join(n.cfg.DataDir, "blobs"), files.Options{BaseURL: n.cfg.PublicURL + "/v1/blobs/", MaxSize: n.cfg.MaxMediaBytes})
		if err != nil {
			return b, err
		}
		n.closers = append(n.closers, bs)
		b.Blobs = bs
	}
	return b, nil
}

// usableDir makes the data directory if needed and checks that a file can be
// made in it, so that a directory that is a file, or one this user may not
// write, is said as such (SQLite says "unable to open database file: no such
// file or directory" for either).
func usableDir(dir string, log *slog.Logger) error {
	if err := privateDir(dir, log); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("--data-dir %s is not writable by this user (uid %d): %w", dir, os.Getuid(), err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// privateDir makes the data directory 0700 if it is missing, and takes the
// group's and others' permissions off one that has any: it holds password
// hashes, token hashes and every message, and a 0755 directory left them
// readable by any local user (the files in it are 0600 since, but a database
// made before was 0644). One it cannot change is refused.
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--data-dir %s: cannot make it a directory: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--data-dir %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("--data-dir %s is open to other users (mode %04o) and cannot be made private: chmod 700 it, or run as its owner: %w", dir, perm, err)
		}
		log.Warn("the data directory was open to other users: made it private", "data_dir", dir, "was", fmt.Sprintf("%04o", perm), "now", "0700")
	}
	return nil
}
