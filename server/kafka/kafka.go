// Package kafka puts connection-registry updates through a Kafka topic to
// registry workers, as the design draws it (docs/production.md, "Registry updates
// through Kafka"): a node publishes each connect and disconnect, keyed by user
// so that one user's updates stay in one partition and in order, and the
// workers of every node, one consumer group, apply them to the shared registry
// in batches. A reconnect storm then reaches Redis at the pace the workers
// drain the topic instead of all at once. The registry's reads (Nodes,
// LastSeen) and DropNode go straight to the registry.
//
// The package knows the registry only as a server.VersionedRegistry: each
// update carries its node's increasing version, so a replayed or reordered
// update (a worker that crashed before committing, a produce retried after a
// timeout) cannot bring back a closed connection.
//
// When Kafka fails, updates are written to the registry directly, through a
// circuit breaker that logs one WARN and, on recovery, one INFO.
package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/breaker"
)

var (
	_ server.Registry   = (*Registry)(nil)
	_ server.NodeKeeper = (*Registry)(nil)
)

// Defaults of Options.
const (
	DefaultTopic       = "chat-registry"
	DefaultPartitions  = 16
	DefaultCallTimeout = 2 * time.Second
	// DefaultMaxAge is Options.MaxAge's default: a day, under the 25 h for
	// which the Redis registry keeps a user's connection versions after
	// their last change (server/redis's versionsTTL).
	DefaultMaxAge = 24 * time.Hour
)

// Options configure the queue. Brokers is required; zero fields take the
// defaults named.
type Options struct {
	Brokers []string
	Topic   string // [DefaultTopic]
	Group   string // the workers' consumer group [Topic + "-workers"]
	// Partitions and ReplicationFactor are used when the topic is missing
	// and this node creates it [DefaultPartitions; the brokers' default].
	Partitions        int32
	ReplicationFactor int16
	// CallTimeout bounds one publish, the client's retries included; past
	// it the update is written to the registry directly [DefaultCallTimeout].
	CallTimeout time.Duration
	// TLS, and SASL when SASLUser is set (SCRAM-SHA-512 unless SASLMechanism
	// says SCRAM-SHA-256 or PLAIN), as Amazon MSK's listeners want them.
	TLS           *tls.Config
	SASLUser      string
	SASLPassword  string
	SASLMechanism string
	// ApplyRate caps the updates per second this node's worker applies, so a
	// storm reaches Redis at that pace and waits in the topic meanwhile (the
	// lag grows instead of Redis's load); 0: as fast as the registry takes them.
	ApplyRate int
	// MaxAge: a worker skips updates published longer ago than this
	// [DefaultMaxAge] (replay.go).
	MaxAge time.Duration
	// NoWorkers: this node publishes but does not apply (the workers run on
	// other nodes).
	NoWorkers bool
	Breaker   breaker.Options
	// Registerer takes the queue's metrics; nil: not registered.
	Registerer prometheus.Registerer
	Logger     *slog.Logger // nil: discard
}

// Registry is a server.Registry whose Add and Remove go through the topic.
type Registry struct {
	store server.VersionedRegistry
	o     Options
	log   *slog.Logger
	prod  *kgo.Client
	adm   *kadm.Client
	cb    *breaker.Breaker
	m     metrics

	version atomic.Int64 // the last version this node gave an update

	mu       sync.Mutex
	produced map[int32]int64 // partition → offset of the last update this node published (Settle)

	stop    context.CancelFunc
	workers sync.WaitGroup
	batch   int         // updates per registry call; the worker's own (see apply)
	cons    *kgo.Client // nil with NoWorkers
}

// breakerDefaults: a failing Kafka costs each connect a CallTimeout before
// its direct write, so the circuit opens after a few failures in a row.
var breakerDefaults = breaker.Options{Window: 10 * time.Second, MinRequests: 20, FailureRatio: 0.5, ConsecutiveFailures: 3}

// Open connects to the brokers, creates the topic if it is missing, and starts
// this node's worker. Brokers not answering is not an error: the node starts,
// writes the registry directly, and takes the queue when they answer.
func Open(ctx context.Context, o Options, store server.VersionedRegistry) (*Registry, error) {
	if len(o.Brokers) == 0 {
		return nil, errors.New("kafka: no brokers")
	}
	if o.Topic == "" {
		o.Topic = DefaultTopic
	}
	if o.Group == "" {
		o.Group = o.Topic + "-workers"
	}
	if o.Partitions <= 0 {
		o.Partitions = DefaultPartitions
	}
	if o.ReplicationFactor == 0 {
		o.ReplicationFactor = -1
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	common, err := clientOpts(o)
	if err != nil {
		return nil, err
	}
	r := &Registry{store: store, o: o, log: log, produced: map[int32]int64{}, batch: maxPoll}
	// Microseconds: increasing across this node's updates, and far below the
	// 2^53 that VersionedRegistry's versions stay under.
	r.version.Store(time.Now().UnixMicro())
	if r.m, err = newMetrics(o.Registerer); err != nil {
		return nil, err
	}
	r.cb, err = breaker.New("kafka", o.Breaker, breakerDefaults, o.Registerer, log,
		func(err error) bool { return !errors.Is(err, context.Canceled) },
		func(err error) bool { return errors.Is(err, context.Canceled) })
	if err != nil {
		return nil, err
	}
	r.prod, err = kgo.NewClient(append(common,
		kgo.DefaultProduceTopic(o.Topic),
		// The client refuses a delivery timeout under a second; a publish's
		// context bounds it to CallTimeout all the same.
		kgo.RecordDeliveryTimeout(max(o.CallTimeout, time.Second)),
		kgo.ProduceRequestTimeout(o.CallTimeout),
	)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: producer: %w", err)
	}
	r.adm = kadm.NewClient(r.prod)
	if err := r.ensureTopic(ctx); err != nil {
		log.Warn("kafka is not answering; registry updates are written directly until it does", "brokers", o.Brokers, "err", err)
	}
	if !o.NoWorkers {
		r.cons, err = kgo.NewClient(append(common,
			kgo.ConsumerGroup(o.Group),
			kgo.ConsumeTopics(o.Topic),
			kgo.DisableAutoCommit(),
			kgo.FetchMaxWait(250*time.Millisecond),
		)...)
		if err != nil {
			r.prod.Close()
			return nil, fmt.Errorf("kafka: worker: %w", err)
		}
		wctx, cancel := context.WithCancel(context.Background())
		r.stop = cancel
		r.workers.Add(1)
		go func() { defer r.workers.Done(); r.work(wctx) }()
	}
	return r, nil
}

func clientOpts(o Options) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(o.Brokers...), kgo.DialTimeout(o.CallTimeout)}
	if o.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(o.TLS))
	}
	if o.SASLUser != "" {
		var m sasl.Mechanism
		switch o.SASLMechanism {
		case "", "SCRAM-SHA-512":
			m = scram.Auth{User: o.SASLUser, Pass: o.SASLPassword}.AsSha512Mechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: o.SASLUser, Pass: o.SASLPassword}.AsSha256Mechanism()
		case "PLAIN":
			m = plain.Auth{User: o.SASLUser, Pass: o.SASLPassword}.AsMechanism()
		default:
			return nil, fmt.Errorf("kafka: SASL mechanism %q: want SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN", o.SASLMechanism)
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// ensureTopic creates the topic unless it exists.
func (r *Registry) ensureTopic(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*r.o.CallTimeout)
	defer cancel()
	res, err := r.adm.CreateTopic(ctx, r.o.Partitions, r.o.ReplicationFactor, nil, r.o.Topic)
	if err == nil {
		err = res.Err
	}
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		return nil
	}
	return err
}

// Close stops this node's worker (it leaves the group, so its partitions
// move to the other nodes' workers) and the producer.
func (r *Registry) Close() error {
	if r.stop != nil {
		r.stop()
		r.workers.Wait()
		r.cons.Close()
	}
	r.prod.Close()
	return nil
}
