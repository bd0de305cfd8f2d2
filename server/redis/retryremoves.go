package redis

import (
	"context"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

// A Remove that fails (Redis down, its circuit open, slower than the call
// timeout) leaves an entry for a connection that has ended: other nodes route
// the user's live copies to this node, which no longer holds the connection,
// and presence says online. Nothing else would take it out — the keeper's
// restore only adds live connections, DropNode only runs for dead nodes — so
// the failed removes are kept here and retried by the keeper's next
// heartbeats. A connection id is never reused, so removing its entry late is
// always right.

// retryPerBeat bounds how many failed removes one heartbeat retries, so that
// the first beat after an outage does not land a storm on Redis; the rest wait
// for the next beats.
const retryPerBeat = 4096

// retryChunk is how many removes one pipeline of a retry carries (three
// commands each), small enough to stay within the call timeout on a loaded
// node.
const retryChunk = 128

// maxFailedRemoves bounds the memory the failed removes take during a long
// outage with churning connections; beyond it they are counted and logged,
// and their entries stay until their node is dropped.
const maxFailedRemoves = 1 << 17

// failedRemoves are the removes to retry: a Remove's presence, or an Apply's
// change that said gone, retried through Apply so that its version still
// outranks an older Add a queue may deliver later.
type failedRemoves struct {
	mu      sync.Mutex
	direct  map[server.Presence]struct{}
	applied map[server.Presence]server.PresenceChange
	lost    int // given up since the last log, over maxFailedRemoves
}

func (f *failedRemoves) full() bool {
	if len(f.direct)+len(f.applied) < maxFailedRemoves {
		return false
	}
	f.lost++
	return true
}

func (f *failedRemoves) addDirect(ps ...server.Presence) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.direct == nil {
		f.direct = make(map[server.Presence]struct{})
	}
	for _, p := range ps {
		if !f.full() {
			f.direct[p] = struct{}{}
		}
	}
}

func (f *failedRemoves) addApplied(chs ...server.PresenceChange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.applied == nil {
		f.applied = make(map[server.Presence]server.PresenceChange)
	}
	for _, ch := range chs {
		if !ch.Gone {
			continue
		}
		if old, ok := f.applied[ch.Presence]; ok && old.Version >= ch.Version {
			continue
		}
		if !f.full() {
			f.applied[ch.Presence] = ch
		}
	}
}

// take removes and returns up to n failed removes of each kind, and how many
// were given up since the last take.
func (f *failedRemoves) take(n int) (direct []server.Presence, applied []server.PresenceChange, lost int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := range f.direct {
		if len(direct) == n {
			break
		}
		direct = append(direct, p)
		delete(f.direct, p)
	}
	for p, ch := range f.applied {
		if len(direct)+len(applied) == n {
			break
		}
		applied = append(applied, ch)
		delete(f.applied, p)
	}
	lost, f.lost = f.lost, 0
	return direct, applied, lost
}

// remove queues p's removal on pl: out of the user's hash and the node's
// reverse set, and the user's last-seen time.
func (r *Registry) remove(ctx context.Context, pl goredis.Pipeliner, p server.Presence) {
	pl.HDel(ctx, r.c.key("reg", p.UserID), p.ConnID)
	pl.SRem(ctx, r.c.key("node", p.NodeID), member(p))
	r.sawLast(ctx, pl, p.UserID)
}

// retryRemoves retries up to retryPerBeat failed removes, in pipelines of
// retryChunk; it stops at the first failure, and what failed or was not tried
// waits for the next heartbeat.
func (r *Registry) retryRemoves(ctx context.Context) error {
	direct, applied, lost := r.failed.take(retryPerBeat)
	if lost > 0 {
		r.c.log.Warn("registry: too many failed removes to retry; their entries stay until their node is dropped",
			"given_up", lost, "limit", maxFailedRemoves)
	}
	if len(direct) == 0 && len(applied) == 0 {
		return nil
	}
	done := 0
	for i, chunk := 0, []server.Presence(nil); i < len(direct); i += len(chunk) {
		chunk = direct[i:min(i+retryChunk, len(direct))]
		err := r.c.do(ctx, "registry retry removes", func(ctx context.Context) error {
			_, err := r.c.rdb.Pipelined(ctx, func(pl goredis.Pipeliner) error {
				for _, p := range chunk {
					r.remove(ctx, pl, p)
				}
				return nil
			})
			return err
		})
		if err != nil {
			r.failed.addDirect(direct[i:]...)
			r.failed.addApplied(applied...)
			return err
		}
		done += len(chunk)
	}
	for i, chunk := 0, []server.PresenceChange(nil); i < len(applied); i += len(chunk) {
		chunk = applied[i:min(i+retryChunk, len(applied))]
		// Apply records its own failures again.
		if err := r.Apply(ctx, chunk); err != nil {
			r.failed.addApplied(applied[i+len(chunk):]...)
			return err
		}
		done += len(chunk)
	}
	r.c.log.Info("registry: removed the entries of connections whose remove had failed", "removed", done)
	return nil
}
