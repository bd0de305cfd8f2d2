package server

import (
	"context"
	"errors"

	"github.com/chatterm/chat/wire"
)

// rolesPath is the SendPath of backends without their own: the roles one by
// one (on one node, in process, each call is cheap).
type rolesPath struct{ b Backends }

func (p rolesPath) Admit(ctx context.Context, key string, limit int, convID string, n int) Admission {
	a := Admission{Allowed: n}
	if limit > 0 {
		a.Allowed, a.RetryAfter, a.RateErr = p.b.Rate.AllowN(ctx, key, n, limit)
		if a.RateErr != nil {
			a.Allowed = n
		}
	}
	if a.Allowed > 0 {
		a.Last, a.SeqErr = p.b.Sequencer.NextN(ctx, convID, a.Allowed)
		if a.SeqErr == nil {
			a.Taken = a.Allowed
		}
	}
	return a
}

func (p rolesPath) Relay(ctx context.Context, self string, users []string, frames [][]byte, touch Touch) (r Relayed) {
	nodes, err := p.b.Registry.Nodes(ctx, users)
	if err != nil {
		r.RegistryErr = err
	} else {
		r.Online = make(map[string]bool, len(nodes))
		byNode := map[string][]string{}
		for u, ns := range nodes {
			r.Online[u] = len(ns) > 0
			for _, n := range ns {
				if n != self {
					byNode[n] = append(byNode[n], u)
				}
			}
		}
		for n, us := range byNode {
			for _, d := range frames {
				if err := p.b.Broker.Publish(ctx, n, Envelope{UserIDs: us, Frame: d}); err != nil {
					r.BrokerErr = errors.Join(r.BrokerErr, err)
				}
			}
		}
	}
	if !touch.At.IsZero() {
		r.TouchErr = p.b.Inbox.Touch(ctx, touch.Users, touch.ConvID, touch.At)
	}
	return r
}

// seqPool holds the seq_nos a batch took with its rate limit (SendPath.Admit),
// handed out in order to the messages that reach the store, under the
// conversation's lock.
type seqPool struct {
	next, last int64 // next > last: none left
	err        error // the Sequencer failed: the store's counter numbers the batch
}

// take hands out the next n numbers, if the pool has them.
func (p *seqPool) take(n int) (first int64, ok bool) {
	if p == nil || p.last-p.next+1 < int64(n) {
		return 0, false
	}
	first = p.next
	p.next += int64(n)
	return first, true
}

// drop empties the pool without giving its numbers back: a seq_no collided,
// so the counter was behind the table. Those at or below the table's last_seq
// are stored ones; Service.giveBackUnstored returns the rest first.
func (p *seqPool) drop() {
	if p != nil {
		p.next = p.last + 1
	}
}

// admitSends counts the batch (reqs, of one sender to one conversation) against the
// sender's rate and takes seq_nos for the sends let through, in one call; it
// refuses the rest, in order, in out. It returns the sends let through and
// their numbers. The caller holds the conversation's lock, so this node fans
// out a conversation's messages in the order of their numbers.
func (s *Service) admitSends(ctx context.Context, userID, convID string, reqs []wire.SendRequest, out []SendResult) ([]wire.SendRequest, []SendResult, *seqPool) {
	a := s.cfg.SendPath.Admit(ctx, "send:"+userID, max(s.cfg.SendRate, 0), convID, len(reqs))
	if a.RateErr != nil {
		// Seed 003: rate limiting fails open; losing it briefly beats blocking sends.
		s.metrics.Fallbacks.WithLabelValues("rate_limit").Inc()
		a.Allowed = len(reqs)
	}
	for i := a.Allowed; i < len(reqs); i++ {
		s.metrics.RateLimited.Inc()
		out[i].Err = &wire.Error{Code: wire.CodeRateLimited, Message: "sending too fast; retry after the hint", RetryAfterMs: retryAfterMs(a.RetryAfter)}
	}
	pool := &seqPool{next: a.Last - int64(a.Taken) + 1, last: a.Last, err: a.SeqErr}
	if a.SeqErr != nil {
		pool.next, pool.last = 1, 0
	}
	return reqs[:a.Allowed], out[:a.Allowed], pool
}

// release gives back the numbers the batch took and did not use (sends refused
// by the rate limit on a backend that took numbers for all, or not stored), if
// no send took one since: a gap would hold the conversation's clients up.
func (s *Service) release(ctx context.Context, convID string, pool *seqPool) {
	if pool.next > pool.last {
		return
	}
	if err := s.cfg.Sequencer.Release(ctx, convID, pool.last, int(pool.last-pool.next+1)); err != nil {
		s.log.Debug("give seq_nos back", "conversation", convID, "err", err)
	}
}
