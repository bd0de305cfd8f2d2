package kafka

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	published prometheus.Counter   // updates put on the topic
	direct    prometheus.Counter   // updates written to the registry directly (Kafka failing)
	applied   prometheus.Counter   // updates the workers applied
	lag       prometheus.Histogram // publish → applied, per batch's oldest update
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	updates := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chat_registry_updates_total",
		Help: "Registry updates by path: queue (published to Kafka) or direct (Kafka failing: written to the registry).",
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
		for _, c := range []prometheus.Collector{updates, applied, lag} {
			if err := reg.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					return metrics{}, fmt.Errorf("kafka: metrics: %w", err)
				}
			}
		}
	}
	return metrics{published: updates.WithLabelValues("queue"), direct: updates.WithLabelValues("direct"), applied: applied, lag: lag}, nil
}
