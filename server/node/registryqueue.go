package node

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/kafka"
)

// openRegistryQueue puts b's registry behind a Kafka topic when brokers are
// configured; otherwise registry writes stay synchronous, and the log says so.
func (n *Node) openRegistryQueue(ctx context.Context, b *server.Backends, reg prometheus.Registerer) error {
	p, log := n.cfg.Production, n.cfg.Logger
	if len(p.KafkaBrokers) == 0 {
		log.Info("registry updates: synchronous writes to Redis, no queue")
		return nil
	}
	store, ok := b.Registry.(server.VersionedRegistry)
	if !ok {
		return fmt.Errorf("--kafka-brokers: the registry (%T) cannot apply queued updates", b.Registry)
	}
	o := kafka.Options{Brokers: p.KafkaBrokers, Topic: p.KafkaTopic, SASLUser: p.KafkaSASLUser, SASLPassword: p.KafkaSASLPassword,
		SASLMechanism: p.KafkaSASLMechanism, ApplyRate: p.KafkaApplyRate, MaxAge: p.KafkaMaxAge, Registerer: reg, Logger: log}
	if p.KafkaTLS {
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	q, err := kafka.Open(ctx, o, store)
	if err != nil {
		return fmt.Errorf("--kafka-brokers: %w", err)
	}
	// Closed before Redis (closers run last first): the worker stops before
	// the registry it writes to.
	n.closers = append(n.closers, q)
	b.Registry = q
	log.Info("registry updates: through Kafka to registry workers", "topic", cmp.Or(o.Topic, kafka.DefaultTopic), "brokers", p.KafkaBrokers)
	return nil
}
