package sqlite

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// writerStats counts what the single writer does, for /metrics: commits,
// the jobs they carried (jobs per commit is the group-commit batch) and the
// time spent running batches. A writer busy for nearly every second of wall
// time is the node's bottleneck: messages then wait for it, not for the CPU
// or the network (docs/benchmarks.md has runs read this way).
type writerStats struct {
	commits atomic.Int64
	jobs    atomic.Int64
	busy    atomic.Int64 // nanoseconds
}

func (w *writerStats) add(jobs int, took time.Duration) {
	w.commits.Add(1)
	w.jobs.Add(int64(jobs))
	w.busy.Add(int64(took))
}

// register exposes the counters on reg (nil: nowhere). The values are read at
// scrape time, so the writer pays three atomic adds per commit and nothing else.
func (w *writerStats) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "chat_store_commits_total",
			Help: "Transactions the embedded store's single writer committed (one fsync each)."},
			func() float64 { return float64(w.commits.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "chat_store_commit_jobs_total",
			Help: "Writes those transactions carried (a connection's sends, a boundary move, ...); per commit, the group-commit batch."},
			func() float64 { return float64(w.jobs.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "chat_store_writer_busy_seconds_total",
			Help: "Time the single writer spent running batches: statements, commit and fsync, and any wait for a CPU meanwhile. Near one second per second, the writer is the bottleneck."},
			func() float64 { return time.Duration(w.busy.Load()).Seconds() }),
	} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				continue // a second store in one process (tests): the first one's counters stay
			}
			return fmt.Errorf("register store metrics: %w", err)
		}
	}
	return nil
}
