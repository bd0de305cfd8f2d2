package node

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fallbackWatch says in the log when fallbacks last. Each fallback taken is
// counted (chat_fallbacks_total{role}) and logged at DEBUG only, since an
// outage would write a line per request; and not every one comes with an open
// breaker (a Redis that answers every call with an error the roles cannot use
// leaves it closed). So a node that takes fallbacks in every check period for
// `after` logs one WARN with the counts by role, and one INFO when a period
// passes without any: on every node, since each takes its own.
type fallbackWatch struct {
	fallbacks *prometheus.CounterVec
	every     time.Duration // check period
	after     time.Duration // fallbacks in every period this long: WARN
	log       *slog.Logger
}

// counts reads the counter's value by role.
func (w *fallbackWatch) counts() map[string]float64 {
	ch := make(chan prometheus.Metric, 32)
	go func() { w.fallbacks.Collect(ch); close(ch) }()
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil {
			continue
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "role" {
				out[l.GetValue()] += d.GetCounter().GetValue()
			}
		}
	}
	return out
}

// run checks every period until ctx ends.
func (w *fallbackWatch) run(ctx context.Context) {
	t := time.NewTicker(w.every)
	defer t.Stop()
	last := w.counts()
	var since time.Time          // first period of the current run of periods with fallbacks
	var start map[string]float64 // the counts before it
	warned := false
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cur := w.counts()
			taken := false
			for role, v := range cur {
				if v > last[role] {
					taken = true
				}
			}
			switch {
			case taken && since.IsZero():
				since, start = now.Add(-w.every), last
			case !taken && !since.IsZero():
				if warned {
					w.log.Info("fallbacks no longer taken", "lasted", now.Sub(since).Round(time.Second), "fallbacks", diff(start, last))
				}
				since, start, warned = time.Time{}, nil, false
			}
			if taken && !warned && now.Sub(since) >= w.after {
				w.log.Warn("fallbacks taken for a while: a backing service (Redis, most likely) is failing or misconfigured; counts by role in chat_fallbacks_total",
					"for", now.Sub(since).Round(time.Second), "fallbacks", diff(start, cur))
				warned = true
			}
			last = cur
		}
	}
}

// diff is what each role took between two readings, in role order.
func diff(from, to map[string]float64) map[string]int {
	out := map[string]int{}
	for _, role := range slices.Sorted(maps.Keys(to)) {
		if n := int(to[role] - from[role]); n > 0 {
			out[role] = n
		}
	}
	return out
}
