package kafka

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A replayed update is harmless while the registry still holds the version
// of its connection's last change: it is no newer, and a no-op. The Redis
// registry keeps those versions for 25 h after a user's last change; a
// replay of older updates would find none, and an Add whose Remove never
// went through the topic (written directly while Kafka failed, or made by a
// node's drop or its keeper) would put back a connection long closed. Such a
// replay comes when a consumer group loses its offsets (Kafka forgets those
// of a group idle for its offsets.retention.minutes, 7 days by default) and
// starts again from the start of the topic (retained 7 days by default). So
// a worker skips updates published more than MaxAge ago. An update that old
// and never applied (a worker a day behind) is skipped too: its connection
// is then missing from the registry until it reconnects, and what is sent to
// it meanwhile reaches it from the pending rows (the sweep, or its connect).
type expiredUpdates struct {
	n      int
	oldest time.Time
}

// skip reports whether rec is older than maxAge, counting it if so. The
// record's timestamp is its producer's clock at publish, not the version:
// a node's versions count up from its start and fall behind the clock.
func (e *expiredUpdates) skip(rec *kgo.Record, maxAge time.Duration) bool {
	if rec.Timestamp.IsZero() || time.Since(rec.Timestamp) <= maxAge {
		return false
	}
	e.n++
	if e.oldest.IsZero() || rec.Timestamp.Before(e.oldest) {
		e.oldest = rec.Timestamp
	}
	return true
}

// report logs a poll's skipped updates in one line, and counts them.
func (e *expiredUpdates) report(log *slog.Logger, c prometheus.Counter) {
	if e.n == 0 {
		return
	}
	c.Add(float64(e.n))
	log.Warn("registry worker: skipped updates older than --kafka-max-age (a replay of the topic)",
		"updates", e.n, "oldest", e.oldest.UTC().Format(time.RFC3339))
}
