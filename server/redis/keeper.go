package redis

import (
	"context"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.NodeKeeper = (*Registry)(nil)

// Keep heartbeats nodeID and reaps dead nodes until ctx ends. A node silent for
// three heartbeats is dead: its connections leave the registry, so messages for
// its users go to pending_deliveries instead of a channel nobody reads.
func (r *Registry) Keep(ctx context.Context, nodeID string) {
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
