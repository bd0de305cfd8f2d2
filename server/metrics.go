package server

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Service's Prometheus collectors.
type Metrics struct {
	Connections     prometheus.Gauge
	MessagesStored  prometheus.Counter
	Duplicates      prometheus.Counter
	SendDuration    prometheus.Histogram
	DeliveryLatency prometheus.Histogram
	Fallbacks       *prometheus.CounterVec
	RateLimited     prometheus.Counter
	SlowConsumers   prometheus.Counter
	Overloaded      prometheus.Counter
	Archived        prometheus.Counter
	FramesIn        *prometheus.CounterVec
	PasswordHashes  prometheus.Counter
	HashRefused     prometheus.Counter
	Redelivered     prometheus.Counter
	Resyncs         prometheus.Counter
	Refanouts       prometheus.Counter
}

// NewMetrics creates the collectors and registers them with reg (nil: none).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Connections:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "chat_connections", Help: "Live WebSocket connections on this node."}),
		MessagesStored: prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_messages_stored_total", Help: "Messages stored (acknowledged to the sender)."}),
		Duplicates:     prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_messages_duplicate_total", Help: "Resends of an already stored message_id (answered, not stored)."}),
		SendDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "chat_send_duration_seconds", Help: "From a send request to its durable store.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		DeliveryLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "chat_delivery_latency_seconds", Help: "From a message being stored to its frame being written to a recipient's socket.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		Fallbacks:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chat_fallbacks_total", Help: "Degraded paths taken because a backing service failed."}, []string{"role"}),
		RateLimited:    prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_rate_limited_total", Help: "Sends refused by the per-user rate limit."}),
		SlowConsumers:  prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_slow_consumers_total", Help: "Connections closed because their send buffer was full."}),
		Archived:       prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_messages_archived_total", Help: "Messages moved to the cold tier."}),
		Overloaded:     prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_overloaded_total", Help: "Sends refused because too many were in flight."}),
		FramesIn:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chat_frames_in_total", Help: "WebSocket frames received, by type."}, []string{"type"}),
		PasswordHashes: prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_password_hashes_total", Help: "bcrypt hashes and comparisons run (logins, registrations, unknown users alike)."}),
		Redelivered:    prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_redelivered_total", Help: "Messages sent again by the delivery worker: still unacked by a connected recipient after the grace period."}),
		Resyncs:        prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_resyncs_total", Help: "Times this node caught all its connections up because publications to it may have been lost."}),
		Refanouts:      prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_refanouts_total", Help: "Stored messages fanned out again because their first fan-out may not have happened (a resend, or a send answered maybe_stored)."}),
		HashRefused:    prometheus.NewCounter(prometheus.CounterOpts{Name: "chat_password_hash_refused_total", Help: "Logins and registrations answered 'overloaded' because every password-hashing slot stayed busy."}),
	}
	if reg != nil {
		reg.MustRegister(m.Connections, m.MessagesStored, m.Duplicates, m.SendDuration, m.DeliveryLatency, m.Fallbacks, m.RateLimited, m.SlowConsumers, m.Overloaded, m.Archived, m.FramesIn, m.PasswordHashes, m.HashRefused, m.Redelivered, m.Resyncs, m.Refanouts)
	}
	return m
}
