package redis

import (
	"context"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.NodeKeeper = (*Registry)(nil)

// Keep heartbeats nodeID and reaps dead nodes until ctx ends. A node silent for
// three heartbeats is dead: its connections leave the registry, so messages for
// its users go to pending_deliveries instead of a channel nobody reads. With
// each heartbeat it also checks that this node's entries are still there (see
// restore), and adds those of live again when they are not, and retries the
// removes that failed (see retryRemoves).
func (r *Registry) Keep(ctx context.Context, nodeID string, live func() []server.Presence) {
	every := r.c.o.HeartbeatEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	aliveFor := 3 * every
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := r.heartbeat(ctx, nodeID, aliveFor); err != nil {
			r.c.log.Debug("registry heartbeat", "node", nodeID, "err", err)
		} else if err := r.restore(ctx, nodeID, live); err != nil {
			r.c.log.Warn("restore this node's registry entries", "node", nodeID, "err", err)
		} else if err := r.retryRemoves(ctx); err != nil {
			r.c.log.Debug("retry failed registry removes", "node", nodeID, "err", err)
		} else if dead, err := r.deadNodes(ctx); err == nil {
			for _, n := range dead {
				if err := r.DropNode(ctx, n); err != nil {
					r.c.log.Warn("drop dead node from registry", "node", n, "err", err)
					continue
				}
				r.c.log.Info("dropped a dead node's connections from the registry", "node", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// restoreChunk is how many entries one pipeline of restore adds.
const restoreChunk = 512

// restore adds this node's live connections to the registry again when the
// registry may lack some of them: when one of its Adds failed (unsure), or when
// the registry lost them, which the marker registered:{node} tells: it is set
// by the first heartbeat (after such a restore) and removed only with the
// node's entries, by DropNode or by Redis losing its data (a flush, a failover
// to an empty replica; it has no TTL, so volatile-lru never evicts it).
// Without this, those users would look offline to the other nodes until they
// reconnected, their messages waiting in pending_deliveries meanwhile.
func (r *Registry) restore(ctx context.Context, nodeID string, live func() []server.Presence) (err error) {
	marker := r.markerKey(nodeID)
	if _, unsure := r.unsure.LoadAndDelete(nodeID); !unsure {
		var present int64
		err := r.c.do(ctx, "registry marker", func(ctx context.Context) error {
			var err error
			present, err = r.c.rdb.Exists(ctx, marker).Result()
			return err
		})
		if err != nil || present == 1 {
			return err
		}
	}
	defer func() {
		if err != nil {
			r.unsure.Store(nodeID, struct{}{}) // try again with the next heartbeat
		}
	}()
	var ps []server.Presence
	if live != nil {
		ps = live()
	}
	for chunk := range slices.Chunk(ps, restoreChunk) {
		err := r.c.do(ctx, "registry restore", func(ctx context.Context) error {
			_, err := r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
				for _, p := range chunk {
					r.add(ctx, pl, p)
				}
				return nil
			})
			return err
		})
		if err != nil {
			return err
		}
	}
	// A connection that ended while its entry was being added again has had its
	// Remove already: take the entry out.
	if len(ps) > 0 {
		now := make(map[server.Presence]bool, len(ps))
		for _, p := range live() {
			now[p] = true
		}
		for _, p := range ps {
			if !now[p] {
				if err := r.Remove(ctx, p); err != nil {
					r.c.log.Debug("registry remove", "user", p.UserID, "err", err)
				}
			}
		}
		r.c.log.Info("added this node's connections to the registry again: its entries were lost", "node", nodeID, "connections", len(ps))
	}
	return r.c.do(ctx, "registry marker", func(ctx context.Context) error {
		return r.c.rdb.Set(ctx, marker, "1", 0).Err()
	})
}

// heartbeat marks the node alive for ttl and lists it among the known nodes.
func (r *Registry) heartbeat(ctx context.Context, nodeID string, ttl time.Duration) error {
	return r.c.do(ctx, "registry heartbeat", func(ctx context.Context) error {
		if err := r.c.rdb.Set(ctx, r.c.key("alive", nodeID), "1", ttl).Err(); err != nil {
			return err
		}
		return r.c.rdb.SAdd(ctx, r.nodesKey(), nodeID).Err()
	})
}

// deadNodes are known nodes without a live heartbeat.
func (r *Registry) deadNodes(ctx context.Context) ([]string, error) {
	var dead []string
	err := r.c.do(ctx, "registry dead nodes", func(ctx context.Context) error {
		nodes, err := r.c.rdb.SMembers(ctx, r.nodesKey()).Result()
		if err != nil {
			return err
		}
		for _, n := range nodes {
			alive, err := r.c.rdb.Exists(ctx, r.c.key("alive", n)).Result()
			if err != nil {
				return err
			}
			if alive == 0 {
				dead = append(dead, n)
			}
		}
		return nil
	})
	return dead, err
}

func (r *Registry) nodesKey() string { return r.c.prefix + "nodes" }

// markerKey is the key whose presence says the registry still holds nodeID's
// entries (see restore).
func (r *Registry) markerKey(nodeID string) string { return r.c.key("registered", nodeID) }
