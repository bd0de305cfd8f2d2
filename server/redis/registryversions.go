package redis

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.VersionedRegistry = (*Registry)(nil)

// versionsTTL is how long regv:{user} keeps the versions of a user's
// connections after its last change: far longer than a queue's lag, so a
// replayed change finds the version that makes it a no-op.
const versionsTTL = 25 * time.Hour

// applyChange is one PresenceChange on the user's slot: KEYS[1] reg:{user},
// KEYS[2] regv:{user} (connection → last applied version), KEYS[3]
// seen:{user}; ARGV[1] the connection, ARGV[2] its node, ARGV[3] the version,
// ARGV[4] 1 when gone, ARGV[5] the versions' TTL and ARGV[6] last-seen's (ms),
// ARGV[7] now (unix ms). It returns 1 when applied, 0 when no newer than the
// last applied.
var applyChange = goredis.NewScript(`
local last = redis.call('HGET', KEYS[2], ARGV[1])
if last and tonumber(last) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if ARGV[4] == '1' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[3], ARGV[7], 'PX', ARGV[6])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1`)

// applyChunk is how many changes one pipeline of Apply carries, so one call
// stays well within the call timeout (150 ms by default) on a loaded node:
// with 256, a storm's batches timed out on the bench's two shared cores,
// and their retries opened the breaker for every other Redis call.
const applyChunk = 32

// Apply applies changes in one pipeline per applyChunk: the versioned write
// on each user's slot (applyChange), and the node's reverse set, which is
// updated whether or not the change was newer: a stale member of it is only
// ever read by DropNode, which checks the user's hash first. An Add also lists
// its node among the known nodes, so that an Add applied after its node was
// dropped (a queue's lag outlived the node) is dropped again by the reaper,
// not left pointing at a node that is gone.
func (r *Registry) Apply(ctx context.Context, changes []server.PresenceChange) error {
	for _, ch := range changes {
		if err := checkPresence(ch.Presence); err != nil {
			return err
		}
	}
	for i := 0; i < len(changes); i += applyChunk {
		chunk := changes[i:min(i+applyChunk, len(changes))]
		now := time.Now().UnixMilli()
		calls := make([]*scriptCall, len(chunk))
		for i, ch := range chunk {
			gone := 0
			if ch.Gone {
				gone = 1
			}
			calls[i] = &scriptCall{s: applyChange,
				keys: []string{r.c.key("reg", ch.UserID), r.c.key("regv", ch.UserID), r.c.key("seen", ch.UserID)},
				args: []any{ch.ConnID, ch.NodeID, ch.Version, gone, versionsTTL.Milliseconds(), server.LastSeenTTL.Milliseconds(), now}}
		}
		err := r.c.do(ctx, "registry apply", func(ctx context.Context) error {
			return r.c.pipelined(ctx, calls, func(pl goredis.Pipeliner) {
				for _, ch := range chunk {
					if ch.Gone {
						pl.SRem(ctx, r.c.key("node", ch.NodeID), member(ch.Presence))
					} else {
						pl.SAdd(ctx, r.c.key("node", ch.NodeID), member(ch.Presence))
						pl.SAdd(ctx, r.nodesKey(), ch.NodeID)
					}
				}
			})
		})
		if err != nil {
			// As with a failed Add: an entry may be missing, so the node's
			// next heartbeat puts all its live connections back (restore).
			for _, ch := range chunk {
				if !ch.Gone {
					r.unsure.Store(ch.NodeID, struct{}{})
				}
			}
			// A removal that failed, or was not tried, would leave the
			// entry of a connection that ended: the keeper retries it.
			r.failed.addApplied(changes[i:]...)
			return err
		}
	}
	return nil
}
