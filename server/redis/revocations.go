package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/server"
)

var _ server.Revocations = (*Revocations)(nil)

// How a node knows it hears revocations: it pings its subscription every
// revocationBeat, and hears them while Redis answered on it within
// revocationHeard. So a broken subscription stops the token cache within
// revocationHeard, not at the first failed call.
const (
	revocationBeat  = 250 * time.Millisecond
	revocationHeard = time.Second
)

// Revocations carries token revocations over one pub/sub channel every node
// subscribes to (revoked:{all}). Pub/sub keeps nothing, so what matters is
// knowing when a node might miss one: Hearing is false while its
// subscription is down or silent, and its epoch changes each time the
// subscription is made again (what was published meanwhile is gone).
type Revocations struct {
	c     *Client
	epoch atomic.Uint64
	heard atomic.Int64 // unix nanoseconds Redis last answered on the subscription; 0: not subscribed
	once  sync.Once
}

// Revocations returns the revocation channel of this client; one per node.
func (c *Client) Revocations() *Revocations { return &Revocations{c: c} }

func (r *Revocations) channel() string { return r.c.key("revoked", "all") }

func (r *Revocations) Publish(ctx context.Context, rev server.Revocation) error {
	msg, err := json.Marshal(rev)
	if err != nil {
		return fmt.Errorf("encode revocation: %w", err)
	}
	return r.c.do(ctx, "publish revocation", func(ctx context.Context) error {
		return r.c.rdb.Publish(ctx, r.channel(), msg).Err()
	})
}

// Hearing is ok while the subscription is live and Redis answered on it
// within revocationHeard.
func (r *Revocations) Hearing() (uint64, bool) {
	at := r.heard.Load()
	return r.epoch.Load(), at != 0 && time.Since(time.Unix(0, at)) < revocationHeard
}

// Subscribe returns once Redis confirmed the subscription, or after the call
// timeout with it pending (Redis down at start): the node then caches no
// token until it is live.
func (r *Revocations) Subscribe(ctx context.Context, handle func(server.Revocation)) error {
	if handle == nil {
		return errors.New("redis revocations: nil handler")
	}
	started := false
	r.once.Do(func() { started = true })
	if !started {
		return errors.New("redis revocations: one subscription per Revocations")
	}
	ch := r.channel()
	ps := r.c.rdb.Subscribe(ctx, ch)
	confirmed := make(chan struct{})
	// A Receive blocked on the connection does not end with ctx: closing
	// the subscription does.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	go func() {
		defer stop()
		first := true
		for ctx.Err() == nil {
			v, err := ps.Receive(ctx)
			if ctx.Err() != nil {
				break // nothing is handled after the subscription ended
			}
			if err != nil {
				// go-redis makes the connection again at the next call.
				r.heard.Store(0)
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			// Before the switch: Subscribe returns when confirmed is closed,
			// and must find the node hearing by then.
			r.heard.Store(time.Now().UnixNano())
			switch v := v.(type) {
			case *goredis.Subscription:
				if v.Kind != "subscribe" {
					continue
				}
				// A new epoch: whatever was published before now, while not
				// subscribed, was not heard.
				r.epoch.Add(1)
				if first {
					first = false
					close(confirmed)
				} else {
					r.c.log.Warn("redis revocations: subscription back after a break; token caches start empty", "channel", ch)
				}
			case *goredis.Message:
				var rev server.Revocation
				if err := json.Unmarshal([]byte(v.Payload), &rev); err != nil {
					r.c.log.Warn("redis revocations: dropped a malformed revocation", "channel", ch, "err", err)
				} else {
					handle(rev)
				}
			}
		}
		r.heard.Store(0)
	}()
	go func() {
		t := time.NewTicker(revocationBeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			pctx, cancel := context.WithTimeout(ctx, revocationBeat)
			_ = ps.Ping(pctx) // answered on the receiving loop, which is what counts
			cancel()
		}
	}()
	wait := time.NewTimer(r.c.o.CallTimeout)
	defer wait.Stop()
	select {
	case <-confirmed:
	case <-wait.C:
		r.c.log.Warn("redis revocations: subscription pending until Redis answers; no token is cached meanwhile", "channel", ch)
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
