package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// evalAll runs one script over several keys (one call each, pipelined: in a
// Cluster the keys may live on different nodes). Scripts go by SHA; if Redis lost
// its script cache (restart, FLUSHALL, SCRIPT FLUSH) the batch is resent with the
// script's body, which also reloads it.
func (c *Client) evalAll(ctx context.Context, s *goredis.Script, keys []string, args ...any) ([]*goredis.Cmd, error) {
	run := func(sha bool) ([]*goredis.Cmd, error) {
		cmds := make([]*goredis.Cmd, len(keys))
		_, err := c.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, k := range keys {
				if sha {
					cmds[i] = s.EvalSha(ctx, p, []string{k}, args...)
				} else {
					cmds[i] = s.Eval(ctx, p, []string{k}, args...)
				}
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run(true)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		cmds, err = run(false)
	}
	if err != nil && err != goredis.Nil {
		return cmds, fmt.Errorf("script: %w", err)
	}
	return cmds, nil
}

// eval runs a script on one key.
func (c *Client) eval(ctx context.Context, s *goredis.Script, key string, args ...any) *goredis.Cmd {
	return s.Run(ctx, c.rdb, []string{key}, args...)
}
