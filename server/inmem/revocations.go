package inmem

import (
	"context"
	"slices"
	"sync"

	"github.com/chatterm/chat/server"
)

var _ server.Revocations = (*Revocations)(nil)

// Revocations hands revocations to the handlers subscribed in this process,
// synchronously on the publisher's goroutine. One node only: it always hears
// every revocation, since there is no other node to miss one from.
type Revocations struct {
	mu   sync.RWMutex
	subs []*revSub
}

type revSub struct{ handle func(server.Revocation) }

// NewRevocations returns Revocations with no subscribers.
func NewRevocations() *Revocations { return &Revocations{} }

func (r *Revocations) Publish(_ context.Context, rev server.Revocation) error {
	r.mu.RLock()
	subs := r.subs
	r.mu.RUnlock()
	for _, s := range subs {
		s.handle(rev)
	}
	return nil
}

func (r *Revocations) Subscribe(ctx context.Context, handle func(server.Revocation)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := &revSub{handle: handle}
	r.mu.Lock()
	r.subs = append(slices.Clip(r.subs), s)
	r.mu.Unlock()
	context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.subs = slices.DeleteFunc(slices.Clone(r.subs), func(x *revSub) bool { return x == s })
	})
	return nil
}

func (r *Revocations) Hearing() (uint64, bool) { return 0, true }
