package inmem

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/chatterm/chat/server"
)

var _ server.Sequencer = (*Sequencer)(nil)

// Sequencer hands out seq_no per conversation from in-memory counters. The counters
// start at zero after a restart; the store's conditional write then reports
// ErrSeqTaken and the caller re-seeds from the stored last_seq.
type Sequencer struct {
	shards [nShards]seqShard
}

type seqShard struct {
	mu sync.RWMutex
	m  map[string]*atomic.Int64
	_  [32]byte // keep neighbouring shards' locks off one cache line
}

// NewSequencer returns an empty Sequencer.
func NewSequencer() *Sequencer { return &Sequencer{} }

// counter returns the conversation's counter, creating it on first use. The hot
// path is a read lock and a map lookup; the counter itself is atomic.
func (s *Sequencer) counter(convID string) *atomic.Int64 {
	sh := &s.shards[shardOf(convID)]
	sh.mu.RLock()
	c := sh.m[convID]
	sh.mu.RUnlock()
	if c != nil {
		return c
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c = sh.m[convID]; c == nil {
		if sh.m == nil {
			sh.m = make(map[string]*atomic.Int64)
		}
		c = new(atomic.Int64)
		sh.m[convID] = c
	}
	return c
}

// Next returns the next seq_no of the conversation (1 for a new one).
func (s *Sequencer) Next(_ context.Context, convID string) (int64, error) {
	if convID == "" {
		return 0, fmt.Errorf("sequencer next: %w", errEmpty)
	}
	return s.counter(convID).Add(1), nil
}

// NextN takes the next n seq_nos and returns the last.
func (s *Sequencer) NextN(_ context.Context, convID string, n int) (int64, error) {
	if convID == "" {
		return 0, fmt.Errorf("sequencer next: %w", errEmpty)
	}
	if n < 1 {
		return 0, fmt.Errorf("sequencer next %d: take at least one", n)
	}
	return s.counter(convID).Add(int64(n)), nil
}

// Reseed raises the counter to last if it is below; it never lowers it.
func (s *Sequencer) Reseed(_ context.Context, convID string, last int64) error {
	if convID == "" {
		return fmt.Errorf("sequencer reseed: %w", errEmpty)
	}
	c := s.counter(convID)
	for {
		cur := c.Load()
		if cur >= last || c.CompareAndSwap(cur, last) {
			return nil
		}
	}
}

// Release lowers the counter by n if it is still at last.
func (s *Sequencer) Release(_ context.Context, convID string, last int64, n int) error {
	if convID == "" {
		return fmt.Errorf("sequencer release: %w", errEmpty)
	}
	if n < 1 || int64(n) > last {
		return fmt.Errorf("sequencer release %d ending at %d: not numbers that were taken", n, last)
	}
	s.counter(convID).CompareAndSwap(last, last-int64(n))
	return nil
}
