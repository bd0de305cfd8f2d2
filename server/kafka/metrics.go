package kafka

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	published prometheus.Counter   // updates put on the topic
	direct    prometheus.Counter   // updates written to the registry directly (Kafka failing)
	expired   prometheus.Counter   // updates the worker skipped as older than Options.MaxAge
	applied   prometheus.Counter   // updates the workers applied
	lag       prometheus.Histogram // publish → applied, per batch's oldest update
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	updates := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chat_registry_updates_total",
		Help: "Registry updates by path: queue (published to Kafka), direct (Kafka failing: written to the registry), expired (polled older than --kafka-max-age: skipped).",
	}, []string{"path"})
	applied := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "chat_registry_updates_applied_total",
		Help: "Registry updates this node's worker applied from Kafka.",
	})
	lag := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "chat_registry_queue_lag_seconds",
		Help:    "From publishing a registry update to a worker applying it (the oldest of each batch).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	})
	if reg != nil {
		// Two queues in one process (nodes in one test, or chatbench's) share
		// the series: the second to register adds to the first's collectors.
		// Keeping its own, as before, it counted into collectors nobody read.
		var err error
		if updates, err = registerOrReuse(reg, updates); err != nil {
			return metrics{}, err
		}
		if applied, err = registerOrReuse(reg, applied); err != nil {
			return metrics{}, err
		}
		if lag, err = registerOrReuse(reg, lag); err != nil {
			return metrics{}, err
		}
	}
	return metrics{published: updates.WithLabelValues("queue"), direct: updates.WithLabelValues("direct"), expired: updates.WithLabelValues("expired"), applied: applied, lag: lag}, nil
}

// registerOrReuse registers c, or returns the collector of the same name
// already registered.
func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("kafka: metrics: %w", err)
}
