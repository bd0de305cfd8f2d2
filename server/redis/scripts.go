package redis

import (
	"context"
	"errors"
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

// scriptCall is one script call of a pipeline; cmd is its answer.
type scriptCall struct {
	s    *goredis.Script
	keys []string
	args []any
	cmd  *goredis.Cmd
}

// pipelined sends calls by SHA, then the commands more queues (more may be
// nil), in one pipeline. Calls refused with NOSCRIPT (Redis lost its script
// cache) are sent again with the script's body, which also reloads it: only
// those, so nothing runs twice. It returns the first error of any command.
func (c *Client) pipelined(ctx context.Context, calls []*scriptCall, more func(goredis.Pipeliner)) error {
	cmds, err := c.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, sc := range calls {
			sc.cmd = sc.s.EvalSha(ctx, p, sc.keys, sc.args...)
		}
		if more != nil {
			more(p)
		}
		return nil
	})
	var again []*scriptCall
	for _, sc := range calls {
		if e := sc.cmd.Err(); e != nil && goredis.HasErrorPrefix(e, "NOSCRIPT") {
			again = append(again, sc)
		}
	}
	if len(again) > 0 {
		_, _ = c.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, sc := range again {
				sc.cmd = sc.s.Eval(ctx, p, sc.keys, sc.args...)
			}
			return nil
		})
		err = nil
		for _, sc := range calls {
			if err = sc.cmd.Err(); err != nil && !errors.Is(err, goredis.Nil) {
				break
			}
		}
		for _, cmd := range cmds[min(len(calls), len(cmds)):] {
			if err == nil || errors.Is(err, goredis.Nil) {
				err = cmd.Err()
			}
		}
	}
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	return nil
}
