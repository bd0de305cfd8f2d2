package inmem

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/chatterm/chat/server"
)

var _ server.Broker = (*Broker)(nil)

// Broker hands envelopes to the handlers subscribed in this process. Publish calls
// them synchronously on the caller's goroutine, so a handler must not block. It
// reaches no other process: one node only.
type Broker struct {
	mu   sync.RWMutex
	subs map[string][]*subscription // copy-on-write: Publish reads without copying
}

type subscription struct{ handle func(server.Envelope) }

// NewBroker returns a Broker with no subscribers.
func NewBroker() *Broker { return &Broker{} }

// Publish hands env to every handler subscribed to nodeID; with none it is dropped,
// as Redis PUBLISH to a channel without subscribers is.
func (b *Broker) Publish(_ context.Context, nodeID string, env server.Envelope) error {
	if nodeID == "" {
		return fmt.Errorf("broker publish: %w", errEmpty)
	}
	b.mu.RLock()
	subs := b.subs[nodeID]
	b.mu.RUnlock()
	for _, s := range subs {
		s.handle(env)
	}
	return nil
}

// Subscribe registers handle for nodeID until ctx ends; it is live on return.
func (b *Broker) Subscribe(ctx context.Context, nodeID string, handle func(server.Envelope)) error {
	if nodeID == "" {
		return fmt.Errorf("broker subscribe: %w", errEmpty)
	}
	if handle == nil {
		return fmt.Errorf("broker subscribe %s: nil handler", nodeID)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("broker subscribe %s: %w", nodeID, err)
	}
	s := &subscription{handle: handle}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[string][]*subscription)
	}
	b.subs[nodeID] = append(slices.Clip(b.subs[nodeID]), s)
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		rest := slices.DeleteFunc(slices.Clone(b.subs[nodeID]), func(x *subscription) bool { return x == s })
		if len(rest) == 0 {
			delete(b.subs, nodeID)
		} else {
			b.subs[nodeID] = rest
		}
	})
	return nil
}
