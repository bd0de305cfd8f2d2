package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.InboxIndex = (*InboxIndex)(nil)

// InboxIndex keeps each warm user's inbox in a sorted set inbox:{user}: member
// conversation id, score last activity in unix milliseconds (ZADD on
// send, ZREVRANGE to read).
//
// A marker member (score -1, or -2 once the set was trimmed to InboxSize) says
// the set is warm: Fill writes it, Touch adds only to sets that exist, so a cold
// user never gets a partial inbox that would hide conversations. The set expires
// InboxTTL after the last Fill or Top (reading is what keeps an inbox warm; sends
// to someone who never looks do not).
type InboxIndex struct{ c *Client }

// InboxIndex returns the inbox index.
func (c *Client) InboxIndex() *InboxIndex { return &InboxIndex{c} }

const (
	marker         = "\x00warm"
	markerComplete = -1
	markerTrimmed  = -2
)

// touch: ZADD GT only to an existing (warm) set; trim the least recent beyond
// ARGV[3] conversations (rank 0 is the marker) and mark the set trimmed.
var touch = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], 'GT', ARGV[1], ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - 1 - tonumber(ARGV[3])
if over > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 1, over)
  redis.call('ZADD', KEYS[1], -2, ARGV[4])
end
return 1`)

// top: nil when cold, or when trimmed and asked for more than it holds; else the
// ids, most recent first. Refreshes the TTL.
var top = goredis.NewScript(`
local m = redis.call('ZSCORE', KEYS[1], ARGV[3])
if not m then return false end
local ids = redis.call('ZRANGE', KEYS[1], '+inf', '0', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[1]))
if tonumber(m) == -2 and #ids < tonumber(ARGV[1]) then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return ids`)

// topRO is top for a replica, which takes no write: EVAL_RO, no PEXPIRE. It
// answers {PTTL, ids...}, and the caller refreshes the TTL on the primary when
// it has run down by more than inboxRefresh.
var topRO = goredis.NewScript(`
local m = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not m then return false end
local ids = redis.call('ZRANGE', KEYS[1], '+inf', '0', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[1]))
if tonumber(m) == -2 and #ids < tonumber(ARGV[1]) then return false end
table.insert(ids, 1, redis.call('PTTL', KEYS[1]))
return ids`)

// inboxRefresh is how far an inbox read from a replica lets its TTL run down
// before a read sets it again on the primary: one PEXPIRE an hour per reader at
// the 24 h default, instead of one a read.
func (x *InboxIndex) inboxRefresh() time.Duration { return x.c.o.InboxTTL / 24 }

// score is microseconds: two conversations active in the same millisecond still
// sort by which was later (exact in a float64 score until the year 2255).
func score(t time.Time) int64 { return max(0, t.UnixMicro()) }

func (x *InboxIndex) Touch(ctx context.Context, userIDs []string, convID string, at time.Time) error {
	if convID == "" {
		return errEmpty
	}
	if len(userIDs) == 0 {
		return nil
	}
	keys := make([]string, len(userIDs))
	for i, u := range userIDs {
		keys[i] = x.c.key("inbox", u)
	}
	return x.c.do(ctx, "inbox touch", func(ctx context.Context) error {
		cmds, err := x.c.evalAll(ctx, touch, keys, score(at), convID, x.c.o.InboxSize, marker)
		if err != nil {
			return err
		}
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				return err
			}
		}
		return nil
	})
}

func (x *InboxIndex) Top(ctx context.Context, userID string, limit int) ([]string, error) {
	if limit < 1 {
		return nil, fmt.Errorf("redis inbox top: limit %d must be at least 1", limit)
	}
	k := x.c.key("inbox", userID)
	if x.c.readsFromReplicas() {
		return x.topReplica(ctx, k, limit)
	}
	var ids []string
	err := x.c.do(ctx, "inbox top", func(ctx context.Context) (err error) {
		ids, err = x.c.eval(ctx, top, k, limit, x.c.o.InboxTTL.Milliseconds(), marker).StringSlice()
		return err
	})
	if errors.Is(err, goredis.Nil) {
		return nil, server.ErrCold
	}
	return ids, err
}

// topReplica is Top read from a replica. A replica may lag the primary by a
// little: an inbox just filled can still read cold there (the caller reads the
// store and fills it again), and a touch just made can be missing for a
// moment, as if the read had come a moment earlier.
func (x *InboxIndex) topReplica(ctx context.Context, k string, limit int) ([]string, error) {
	var res []any
	err := x.c.read(ctx, "inbox top", func(ctx context.Context, r goredis.Cmdable) (err error) {
		res, err = topRO.RunRO(ctx, r, []string{k}, limit, marker).Slice()
		return err
	})
	if errors.Is(err, goredis.Nil) || err == nil && len(res) == 0 {
		return nil, server.ErrCold
	}
	if err != nil {
		return nil, err
	}
	pttl, _ := res[0].(int64)
	ids := make([]string, 0, len(res)-1)
	for _, v := range res[1:] {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("redis inbox top: unexpected member %T", v)
		}
		ids = append(ids, s)
	}
	// Reading is what keeps an inbox warm. The replica cannot extend it; the
	// primary can, and only needs to now and then.
	if time.Duration(pttl)*time.Millisecond < x.c.o.InboxTTL-x.inboxRefresh() {
		err := x.c.do(ctx, "inbox refresh", func(ctx context.Context) error {
			return x.c.rdb.PExpire(ctx, k, x.c.o.InboxTTL).Err()
		})
		if err != nil {
			// The read stands; the next one refreshes.
			x.c.log.Debug("redis inbox: ttl refresh failed", "err", err)
		}
	}
	return ids, nil
}

// Fill replaces the set in one MULTI/EXEC: readers see the old inbox or the new.
func (x *InboxIndex) Fill(ctx context.Context, userID string, entries []server.InboxEntry) error {
	if userID == "" {
		return errEmpty
	}
	best := make(map[string]int64, len(entries))
	for _, e := range entries {
		if e.Conversation.ID == "" {
			return fmt.Errorf("redis inbox fill %s: entry with %w", userID, errEmpty)
		}
		ms := e.Conversation.LastMessageAt
		if ms.IsZero() {
			ms = e.Conversation.CreatedAt
		}
		best[e.Conversation.ID] = max(best[e.Conversation.ID], score(ms))
	}
	zs := make([]goredis.Z, 0, len(best)+1)
	for id, ms := range best {
		zs = append(zs, goredis.Z{Score: float64(ms), Member: id})
	}
	// Most recent first, ties as ZREVRANGE orders them.
	slices.SortFunc(zs, func(a, b goredis.Z) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.Member.(string), a.Member.(string))
	})
	m := float64(markerComplete)
	if len(zs) > x.c.o.InboxSize {
		zs, m = zs[:x.c.o.InboxSize], markerTrimmed
	}
	zs = append(zs, goredis.Z{Score: m, Member: marker})
	k := x.c.key("inbox", userID)
	return x.c.do(ctx, "inbox fill", func(ctx context.Context) error {
		_, err := x.c.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Del(ctx, k)
			p.ZAdd(ctx, k, zs...)
			p.PExpire(ctx, k, x.c.o.InboxTTL)
			return nil
		})
		return err
	})
}

func (x *InboxIndex) Forget(ctx context.Context, userID, convID string) error {
	return x.c.do(ctx, "inbox forget", func(ctx context.Context) error {
		return x.c.rdb.ZRem(ctx, x.c.key("inbox", userID), convID).Err()
	})
}
