package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.InboxCopies = (*InboxCopies)(nil)

// InboxCopies keeps each user's inbox copy in a hash inboxcopy:{user} (field
// conversation id, value the entry as the user was given it), expiring
// InboxTTL after its last Save, and the conversations dropped from it in a
// sorted set inboxgone:{user} (score: when, in Redis's clock). Both keys
// hash to the user's slot, so each call is one script on one shard.
//
// The dropped set is what makes a removal stick: an inbox read that began
// before the user was removed, and saves after the Drop, would otherwise put
// the conversation back. A Save leaves out what the set holds; Rejoin takes
// it out of the set. Drops are kept for dropRemembered, far longer than a
// read lasts (its call timeouts), and then forgotten.
type InboxCopies struct{ c *Client }

// InboxCopies returns the inbox copies.
func (c *Client) InboxCopies() *InboxCopies { return &InboxCopies{c} }

// dropRemembered is how long a Drop keeps its conversation out of Saves.
const dropRemembered = time.Hour

// saveCopy: KEYS copy, gone. ARGV: TTL ms, "1" to replace the copy, drops'
// lifetime ms, then conversation id and entry pairs.
var saveCopy = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]))
if ARGV[2] == '1' then redis.call('DEL', KEYS[1]) end
for i = 4, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 0`)

// dropCopy: KEYS copy, gone. ARGV: conversation id, drops' lifetime ms.
var dropCopy = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 0`)

func (x *InboxCopies) keys(userID string) []string {
	return []string{x.c.key("inboxcopy", userID), x.c.key("inboxgone", userID)}
}

func (x *InboxCopies) Save(ctx context.Context, userID string, entries []server.CopiedEntry, complete bool) error {
	if userID == "" {
		return errEmpty
	}
	replace := "0"
	if complete {
		replace = "1"
	}
	args := make([]any, 0, 3+2*len(entries))
	args = append(args, x.c.o.InboxTTL.Milliseconds(), replace, dropRemembered.Milliseconds())
	for _, e := range entries {
		if e.ConvID == "" {
			return fmt.Errorf("redis inbox copy save %s: entry with %w", userID, errEmpty)
		}
		args = append(args, e.ConvID, e.Data)
	}
	return x.c.do(ctx, "inbox copy save", func(ctx context.Context) error {
		return saveCopy.Run(ctx, x.c.rdb, x.keys(userID), args...).Err()
	})
}

func (x *InboxCopies) Load(ctx context.Context, userID string) ([]server.CopiedEntry, error) {
	var m map[string]string
	err := x.c.do(ctx, "inbox copy load", func(ctx context.Context) (err error) {
		m, err = x.c.rdb.HGetAll(ctx, x.c.key("inboxcopy", userID)).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]server.CopiedEntry, 0, len(m))
	for id, data := range m {
		out = append(out, server.CopiedEntry{ConvID: id, Data: []byte(data)})
	}
	return out, nil
}

func (x *InboxCopies) Drop(ctx context.Context, userID, convID string) error {
	if userID == "" || convID == "" {
		return errEmpty
	}
	return x.c.do(ctx, "inbox copy drop", func(ctx context.Context) error {
		return dropCopy.Run(ctx, x.c.rdb, x.keys(userID), convID, dropRemembered.Milliseconds()).Err()
	})
}

func (x *InboxCopies) Rejoin(ctx context.Context, convID string, userIDs []string) error {
	if convID == "" {
		return errEmpty
	}
	if len(userIDs) == 0 {
		return nil
	}
	return x.c.do(ctx, "inbox copy rejoin", func(ctx context.Context) error {
		cmds, err := x.c.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, u := range userIDs {
				p.ZRem(ctx, x.c.key("inboxgone", u), convID)
			}
			return nil
		})
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
