package server

import (
	"context"
	"sync"
	"time"
)

// maxCopyDrops bounds the failed Drops a node keeps retrying; past it a
// failed Drop is not retried, and its conversation stays in the member's copy
// until their next inbox read replaces it (docs/reliability.md).
const maxCopyDrops = 10_000

// copyDropRetry is how often failed Drops are tried again.
const copyDropRetry = time.Second

// copyDrops are the Drops of removed members' inbox copies that failed
// (Redis did not answer), tried again every copyDropRetry until they are
// made: a removal must reach the copy, or a DynamoDB outage that begins
// before the member reads their inbox again would show them the
// conversation from it.
type copyDrops struct {
	mu      sync.Mutex
	pending map[copyDrop]bool
	running bool
}

type copyDrop struct{ user, conv string }

// retryDrop queues a failed Drop, and starts the retries if they are not
// running, in the Service's background group (they end at Shutdown).
func (s *Service) retryDrop(user, conv string) {
	d := &s.copyDrops
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending == nil {
		d.pending = map[copyDrop]bool{}
	}
	if len(d.pending) >= maxCopyDrops {
		s.log.Debug("inbox copy: too many drops to retry; this one is not", "user", user, "conversation", conv)
		return
	}
	d.pending[copyDrop{user, conv}] = true
	if !d.running && !s.closing.Load() {
		d.running = true
		s.bg.Go(s.runDropRetries)
	}
}

// forgetDrops takes back the queued Drops of users added to conv again: made
// now, they would keep it out of their copies.
func (s *Service) forgetDrops(conv string, users []string) {
	d := &s.copyDrops
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, u := range users {
		delete(d.pending, copyDrop{u, conv})
	}
}

func (s *Service) runDropRetries() {
	t := time.NewTicker(copyDropRetry)
	defer t.Stop()
	d := &s.copyDrops
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		d.mu.Lock()
		todo := make([]copyDrop, 0, len(d.pending))
		for k := range d.pending {
			todo = append(todo, k)
		}
		d.mu.Unlock()
		for _, k := range todo {
			ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
			err := s.cfg.InboxCopies.Drop(ctx, k.user, k.conv)
			cancel()
			if err != nil {
				break // Redis is still out: the rest wait for the next tick
			}
			d.mu.Lock()
			delete(d.pending, k)
			d.mu.Unlock()
		}
		d.mu.Lock()
		if len(d.pending) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
	}
}
