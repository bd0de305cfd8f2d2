package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/chatterm/chat/server"
)

var errEmpty = errors.New("user, connection and node ids are required")

// Add publishes the connection's arrival; it reaches Nodes when a worker has
// applied it (the queue's lag).
func (r *Registry) Add(ctx context.Context, p server.Presence) error {
	return r.publish(ctx, server.PresenceChange{Presence: p, Version: r.version.Add(1)})
}

// Remove publishes the connection's end.
func (r *Registry) Remove(ctx context.Context, p server.Presence) error {
	return r.publish(ctx, server.PresenceChange{Presence: p, Gone: true, Version: r.version.Add(1)})
}

// publish puts ch on the topic, keyed by user; when Kafka refuses it, does not
// answer within CallTimeout, or its circuit is open, ch is applied to the
// registry directly. A publish that timed out may still land: its later
// application is a no-op (same version).
func (r *Registry) publish(ctx context.Context, ch server.PresenceChange) error {
	if ch.UserID == "" || ch.ConnID == "" || ch.NodeID == "" {
		return fmt.Errorf("kafka registry: presence %+v: %w", ch.Presence, errEmpty)
	}
	value, err := encode(ch)
	if err != nil {
		return err
	}
	done, qerr := r.cb.Allow()
	if qerr == nil {
		rec, err := r.produce(ctx, &kgo.Record{Key: []byte(ch.UserID), Value: value})
		done(err)
		if err == nil {
			r.m.published.Inc()
			r.mu.Lock()
			if next := rec.Offset + 1; next > r.produced[rec.Partition] {
				r.produced[rec.Partition] = next
			}
			r.mu.Unlock()
			return nil
		}
		qerr = err
	}
	r.m.direct.Inc()
	if err := r.store.Apply(ctx, []server.PresenceChange{ch}); err != nil {
		return fmt.Errorf("registry update: kafka: %v; written directly: %w", qerr, err)
	}
	return nil
}

func (r *Registry) Nodes(ctx context.Context, userIDs []string) (map[string][]string, error) {
	return r.store.Nodes(ctx, userIDs)
}

func (r *Registry) LastSeen(ctx context.Context, userIDs []string) (map[string]time.Time, error) {
	return r.store.LastSeen(ctx, userIDs)
}

// DropNode drops the node's entries from the registry directly. An Add of
// the node still in the topic lands after it; the registry lists the node
// again with it, and its reaper drops it again (redis.Registry.Apply).
func (r *Registry) DropNode(ctx context.Context, nodeID string) error {
	return r.store.DropNode(ctx, nodeID)
}

// Keep is the registry's own NodeKeeper, when it has one: its heartbeats and
// repairs write directly, as they are rare and must not wait for the lag.
func (r *Registry) Keep(ctx context.Context, nodeID string, live func() []server.Presence) {
	if k, ok := r.store.(server.NodeKeeper); ok {
		k.Keep(ctx, nodeID, live)
	}
}

var errTimeout = errors.New("kafka did not acknowledge the update in time")

// produce waits for rec's acknowledgement for CallTimeout at most. The client
// does not give a record up when its context ends once it is in a batch
// (with the brokers gone it would wait for its delivery timeout), so the
// wait is bounded here: a record given up on may still land later, which
// its version makes harmless.
func (r *Registry) produce(ctx context.Context, rec *kgo.Record) (*kgo.Record, error) {
	acked := make(chan error, 1)
	r.prod.Produce(context.WithoutCancel(ctx), rec, func(_ *kgo.Record, err error) { acked <- err })
	t := time.NewTimer(r.o.CallTimeout)
	defer t.Stop()
	select {
	case err := <-acked:
		return rec, err
	case <-t.C:
		return nil, errTimeout
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
