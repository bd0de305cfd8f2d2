package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.Registry = (*Registry)(nil)

// Registry is the design's connection registry: the hash reg:{user} maps each
// connection id to its node, and the set node:{node} holds "<user>\x00<conn>" of
// every connection on that node, so DropNode reads one set instead of scanning.
// Entries have no TTL: a node that dies is cleaned up with DropNode.
type Registry struct {
	c *Client
	// unsure holds the nodes one of whose Adds failed (Redis down, or slower
	// than the call timeout): that entry may be missing, so the node's next
	// heartbeat puts all its live connections back (see restore).
	unsure sync.Map // node id → struct{}
	// failed holds the removes that failed, retried by the keeper's next
	// heartbeats (see retryRemoves).
	failed failedRemoves
}

// Registry returns the connection registry.
func (c *Client) Registry() *Registry { return &Registry{c: c} }

func member(p server.Presence) string { return p.UserID + "\x00" + p.ConnID }

func checkPresence(p server.Presence) error {
	if p.UserID == "" || p.ConnID == "" || p.NodeID == "" {
		return fmt.Errorf("redis registry: presence %+v: %w", p, errEmpty)
	}
	return nil
}

// Add is HSET and SADD, pipelined (two keys, possibly two Cluster slots).
func (r *Registry) Add(ctx context.Context, p server.Presence) error {
	if err := checkPresence(p); err != nil {
		return err
	}
	err := r.c.do(ctx, "registry add", func(ctx context.Context) error {
		_, err := r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
			r.add(ctx, pl, p)
			return nil
		})
		return err
	})
	if err != nil {
		r.unsure.Store(p.NodeID, struct{}{})
	}
	return err
}

// add queues p's entry on pl: its connection in the user's hash, and the
// connection in its node's reverse set.
func (r *Registry) add(ctx context.Context, pl goredis.Pipeliner, p server.Presence) {
	pl.HSet(ctx, r.c.key("reg", p.UserID), p.ConnID, p.NodeID)
	pl.SAdd(ctx, r.c.key("node", p.NodeID), member(p))
}

func (r *Registry) Remove(ctx context.Context, p server.Presence) error {
	if err := checkPresence(p); err != nil {
		return err
	}
	err := r.c.do(ctx, "registry remove", func(ctx context.Context) error {
		_, err := r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
			r.remove(ctx, pl, p)
			return nil
		})
		return err
	})
	if err != nil {
		r.failed.addDirect(p)
	}
	return err
}

// Nodes is one HVALS per user, pipelined.
func (r *Registry) Nodes(ctx context.Context, userIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	cmds := make([]*goredis.StringSliceCmd, len(userIDs))
	err := r.c.do(ctx, "registry nodes", func(ctx context.Context) error {
		_, err := r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
			for i, u := range userIDs {
				cmds[i] = pl.HVals(ctx, r.c.key("reg", u))
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, u := range userIDs {
		vals := cmds[i].Val()
		if len(vals) == 0 {
			continue
		}
		slices.Sort(vals)
		out[u] = slices.Clip(slices.Compact(vals))
	}
	return out, nil
}

// dropIf deletes a connection only if it is still on the dropped node.
var dropIf = goredis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`)

// DropNode reads the node's reverse set and removes its connections in one
// pipeline, then the set. A connection added on the node meanwhile survives in
// the set, and is cleaned up by the next DropNode.
func (r *Registry) DropNode(ctx context.Context, nodeID string) error {
	if nodeID == "" {
		return errEmpty
	}
	setKey := r.c.key("node", nodeID)
	return r.c.do(ctx, "registry drop node", func(ctx context.Context) error {
		members, err := r.c.rdb.SMembers(ctx, setKey).Result()
		if err != nil {
			return err
		}
		// The node is gone (shut down or reaped): no heartbeat to watch any more,
		// and no entries (a node reaped while alive finds its marker gone with
		// its next heartbeat and adds its connections again: see restore).
		if err := r.c.rdb.SRem(ctx, r.nodesKey(), nodeID).Err(); err != nil {
			return err
		}
		if err := r.c.rdb.Del(ctx, r.markerKey(nodeID)).Err(); err != nil {
			return err
		}
		if len(members) == 0 {
			return nil
		}
		_, err = r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
			for _, m := range members {
				user, conn, ok := strings.Cut(m, "\x00")
				if !ok {
					continue
				}
				dropIf.Eval(ctx, pl, []string{r.c.key("reg", user)}, conn, nodeID)
				r.sawLast(ctx, pl, user)
			}
			pl.SRem(ctx, setKey, stringsToAny(members)...)
			return nil
		})
		return err
	})
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// sawLast queues the user's last-seen time (now, in unix milliseconds) on pl:
// a string key seen:{user} that expires after server.LastSeenTTL.
func (r *Registry) sawLast(ctx context.Context, pl goredis.Pipeliner, user string) {
	pl.Set(ctx, r.c.key("seen", user), time.Now().UnixMilli(), server.LastSeenTTL)
}

// LastSeen is one MGET-like pipeline of GETs (the keys may be in different
// Cluster slots).
func (r *Registry) LastSeen(ctx context.Context, userIDs []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	cmds := make([]*goredis.StringCmd, len(userIDs))
	err := r.c.do(ctx, "registry last seen", func(ctx context.Context) error {
		_, err := r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
			for i, u := range userIDs {
				cmds[i] = pl.Get(ctx, r.c.key("seen", u))
			}
			return nil
		})
		if errors.Is(err, goredis.Nil) {
			return nil // some users have no record
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, u := range userIDs {
		if ms, err := cmds[i].Int64(); err == nil {
			out[u] = time.UnixMilli(ms)
		}
	}
	return out, nil
}
