package kafka

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/chatterm/chat/server"
)

// maxPoll is how many updates one worker applies at once (the registry
// pipelines them: a few round trips for the batch, not one per update).
const maxPoll = 2000

// work is this node's registry worker: it applies what it polls, in the
// order of each partition, and commits the offsets once applied. A registry
// that fails is retried, with backoff, until it answers or the worker stops:
// the updates wait in the topic meanwhile, and nothing is committed, so a
// worker that stops leaves them to the next owner of the partition (applied
// twice at worst, which the versions make harmless).
func (r *Registry) work(ctx context.Context) {
	for {
		fs := r.cons.PollRecords(ctx, maxPoll)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			r.log.Debug("registry worker: fetch", "topic", topic, "partition", p, "err", err)
		})
		changes := make([]server.PresenceChange, 0, fs.NumRecords())
		var oldest time.Time
		var expired expiredUpdates
		fs.EachRecord(func(rec *kgo.Record) {
			if expired.skip(rec, r.o.MaxAge) {
				return
			}
			ch, err := decode(rec.Value)
			if err != nil {
				r.log.Warn("registry worker: skipped a record that is not a registry update", "partition", rec.Partition, "offset", rec.Offset, "err", err)
				return
			}
			if oldest.IsZero() || rec.Timestamp.Before(oldest) {
				oldest = rec.Timestamp
			}
			changes = append(changes, ch)
		})
		expired.report(r.log, r.m.expired)
		if len(changes) > 0 && !r.applyPaced(ctx, changes) {
			return
		}
		if !oldest.IsZero() {
			r.m.lag.Observe(time.Since(oldest).Seconds())
		}
		r.m.applied.Add(float64(len(changes)))
		if err := r.cons.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
			// Applied but not committed: the next owner applies them again.
			r.log.Debug("registry worker: commit", "err", err)
		}
	}
}

// applyPaced applies changes at ApplyRate at most: a tenth of a second's
// worth at a time.
func (r *Registry) applyPaced(ctx context.Context, changes []server.PresenceChange) bool {
	if r.o.ApplyRate <= 0 {
		return r.apply(ctx, changes)
	}
	for chunk := range slices.Chunk(changes, max(1, r.o.ApplyRate/10)) {
		next := time.Now().Add(100 * time.Millisecond)
		if !r.apply(ctx, chunk) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(next)):
		}
	}
	return true
}

// apply retries until the registry takes changes; false when the worker
// stops first. A failing registry is given smaller calls (halved down to one
// update per call, grown back on success): under load a large batch is the
// call that times out, and retrying it whole kept Redis's breaker open for
// every other caller (chatbench storm on a loaded machine).
func (r *Registry) apply(ctx context.Context, changes []server.PresenceChange) bool {
	wait := 50 * time.Millisecond
	for len(changes) > 0 {
		n := min(len(changes), r.batch)
		err := r.store.Apply(ctx, changes[:n])
		if err == nil {
			changes = changes[n:]
			r.batch = min(2*r.batch, maxPoll)
			wait = 50 * time.Millisecond
			continue
		}
		r.batch = max(1, n/2)
		r.log.Debug("registry worker: apply", "updates", n, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
	return true
}
