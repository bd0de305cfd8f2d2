package kafka

import (
	"context"
	"fmt"
	"maps"
	"time"
)

// Settle waits until the workers have applied (and committed) every update
// this node published so far: then Nodes and LastSeen say what they say. Tests
// and the bench use it; the Service never waits for the lag.
func (r *Registry) Settle(ctx context.Context) error {
	r.mu.Lock()
	want := maps.Clone(r.produced)
	r.mu.Unlock()
	for {
		committed, err := r.adm.FetchOffsets(ctx, r.o.Group)
		if err == nil {
			err = committed.Error()
		}
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("kafka: settle: %w", err)
		}
		if err == nil {
			behind := false
			for p, next := range want {
				o, ok := committed.Lookup(r.o.Topic, p)
				if !ok || o.At < next {
					behind = true
					break
				}
			}
			if !behind {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka: settle: the workers are behind: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
