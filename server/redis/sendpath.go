package redis

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.SendPath = (*SendPath)(nil)

// SendPath is a send's Redis work in two round trips (issue 19): Admit, the
// rate limit and the seq_nos, before the store write; Relay, the registry
// lookup, the publishes and the inbox touches, after it. On one Redis each is
// one script call (Relay's touches pipelined with it). A Cluster keeps the
// keys of different users and conversations in different slots, which one
// script may not span: there each is a pipeline of one-slot calls, which the
// cluster client sends to the shards at once, still one round trip, at two
// costs: Admit takes numbers for every send before the limit has answered
// (the Service gives back those of refused sends), and Relay publishes one
// envelope per user and node rather than one per node.
type SendPath struct {
	c       *Client
	cluster bool
}

// SendPath returns the send path on this client's roles (Client.Roles sets it).
func (c *Client) SendPath() *SendPath {
	_, cluster := c.rdb.(*goredis.ClusterClient)
	return &SendPath{c: c, cluster: cluster}
}

// admit is RateLimiter.AllowN on KEYS[1] (ARGV[1] sends, ARGV[2] the limit, 0
// for none) and, when KEYS[2] is given, Sequencer.NextN on it for the sends
// let through. It returns {allowed, last seq_no taken (0: none), PTTL of the
// window when not all were allowed}.
var admit = goredis.NewScript(`
local n, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local allowed, pttl = n, 0
if limit > 0 then
  local used = redis.call('INCRBY', KEYS[1], n)
  redis.call('PEXPIRE', KEYS[1], 1000, 'NX')
  allowed = math.min(math.max(limit - (used - n), 0), n)
  if allowed < n then pttl = redis.call('PTTL', KEYS[1]) end
end
local last = 0
if KEYS[2] and allowed > 0 then last = redis.call('INCRBY', KEYS[2], allowed) end
return {allowed, last, pttl}`)

func (p *SendPath) Admit(ctx context.Context, key string, limit int, convID string, n int) server.Admission {
	a := server.Admission{Allowed: n}
	if key == "" || convID == "" || n < 1 {
		a.RateErr, a.SeqErr = errEmpty, errEmpty
		return a
	}
	rate, seq := p.c.key("rate", key), p.c.key("seq", convID)
	var res []int64          // admit's answer
	var incr *goredis.IntCmd // the numbers, when taken apart from the limit
	err := p.c.do(ctx, "admit", func(ctx context.Context) (err error) {
		switch {
		case limit < 1:
			incr = p.c.rdb.IncrBy(ctx, seq, int64(n))
			return incr.Err()
		case !p.cluster:
			res, err = admit.Run(ctx, p.c.rdb, []string{rate, seq}, n, limit).Int64Slice()
			return err
		}
		// Two slots: the numbers cannot wait for the limit's answer.
		calls := []*scriptCall{{s: admit, keys: []string{rate}, args: []any{n, limit}}}
		err = p.c.pipelined(ctx, calls, func(pl goredis.Pipeliner) { incr = pl.IncrBy(ctx, seq, int64(n)) })
		res, _ = calls[0].cmd.Int64Slice()
		return err
	})
	if limit >= 1 {
		if len(res) == 3 {
			a.Allowed = int(res[0])
			if a.Allowed < n {
				a.RetryAfter = windowEndsIn(time.Duration(res[2]) * time.Millisecond)
			}
		} else {
			a.RateErr = err
		}
	}
	switch {
	case incr != nil && incr.Err() == nil:
		a.Last, a.Taken = incr.Val(), n
	case incr == nil && len(res) == 3:
		if res[1] > 0 {
			a.Last, a.Taken = res[1], a.Allowed
		}
	case err != nil:
		a.SeqErr = err
	default:
		a.SeqErr = incr.Err()
	}
	return a
}

// relay is Registry.Nodes and Broker.Publish for the users whose registry
// hashes are KEYS (ARGV[1] this node, ARGV[2] the channel prefix, ARGV[3] the
// user count, then the users, then the frames): each frame goes, in order, to
// every other node where one of them is connected, in one envelope per node
// (encodeEnvelope's format). It returns each user's connection count.
var relay = goredis.NewScript(`
local self, pre, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local function uvarint(x)
  local s = ''
  while x >= 128 do
    s = s .. string.char(x % 128 + 128)
    x = math.floor(x / 128)
  end
  return s .. string.char(x)
end
local conns, nodes, users = {}, {}, {}
for i = 1, n do
  local vals = redis.call('HVALS', KEYS[i])
  conns[i] = #vals
  local seen = {}
  for _, node in ipairs(vals) do
    if node ~= self and not seen[node] then
      seen[node] = true
      if not users[node] then
        users[node] = {}
        nodes[#nodes + 1] = node
      end
      local u = ARGV[3 + i]
      table.insert(users[node], uvarint(#u) .. u)
    end
  end
end
for _, node in ipairs(nodes) do
  local head = uvarint(#users[node]) .. table.concat(users[node])
  for j = 4 + n, #ARGV do
    redis.call('PUBLISH', pre .. node .. '}', head .. ARGV[j])
  end
end
return conns`)

func (p *SendPath) Relay(ctx context.Context, self string, users []string, frames [][]byte, tc server.Touch) (r server.Relayed) {
	if len(users) == 0 && tc.At.IsZero() {
		r.Online = map[string]bool{}
		return r
	}
	// One relay call for all the users on one Redis; on a Cluster one per user,
	// each in its own slot.
	var relays []*scriptCall
	group := len(users)
	if p.cluster {
		group = 1
	}
	for start := 0; start < len(users); start += group {
		us := users[start:min(start+group, len(users))]
		keys := make([]string, len(us))
		args := make([]any, 0, 3+len(us)+len(frames))
		args = append(args, self, p.c.prefix+"bus:{", len(us))
		for i, u := range us {
			keys[i] = p.c.key("reg", u)
			args = append(args, u)
		}
		for _, f := range frames {
			args = append(args, f)
		}
		relays = append(relays, &scriptCall{s: relay, keys: keys, args: args})
	}
	calls := relays
	if !tc.At.IsZero() && tc.ConvID != "" {
		for _, u := range tc.Users {
			calls = append(calls, &scriptCall{s: touch, keys: []string{p.c.key("inbox", u)},
				args: []any{score(tc.At), tc.ConvID, p.c.o.InboxSize, marker}})
		}
	}
	err := p.c.do(ctx, "relay", func(ctx context.Context) error { return p.c.pipelined(ctx, calls, nil) })
	callErr := func(c *scriptCall) error {
		if c.cmd == nil {
			return err // the breaker refused the call
		}
		return c.cmd.Err()
	}
	r.Online = make(map[string]bool, len(users))
	first := 0 // users[first] is the first of c's
	for _, c := range relays {
		if e := callErr(c); e != nil && r.RegistryErr == nil {
			r.RegistryErr = e
		} else if e == nil {
			conns, _ := c.cmd.Int64Slice()
			for k, n := range conns {
				if n > 0 {
					r.Online[users[first+k]] = true
				}
			}
		}
		first += len(c.keys)
	}
	if r.RegistryErr != nil {
		r.Online = nil
	}
	for _, c := range calls[len(relays):] {
		if e := callErr(c); e != nil {
			r.TouchErr = errors.Join(r.TouchErr, e)
		}
	}
	return r
}
