package inmem

import (
	"context"
	"sync"

	"github.com/chatterm/chat/server"
)

var _ server.VersionedRegistry = (*Registry)(nil)

// versions is the last applied Version of each connection (Registry.Apply).
// Entries are never dropped: this registry is one process's, and a queue in
// front of it is for tests (a queue feeds a registry shared between nodes).
type versions struct {
	mu   sync.Mutex
	last map[connKey]int64
}

// Apply applies each change newer than the last applied to its connection.
// The lock is held across the Add or Remove, so two Applies of one
// connection cannot interleave between the version check and the write.
func (r *Registry) Apply(ctx context.Context, changes []server.PresenceChange) error {
	for _, c := range changes {
		if err := checkPresence(c.Presence); err != nil {
			return err
		}
	}
	r.versions.mu.Lock()
	defer r.versions.mu.Unlock()
	if r.versions.last == nil {
		r.versions.last = make(map[connKey]int64)
	}
	for _, c := range changes {
		k := connKey{c.UserID, c.ConnID}
		if last, ok := r.versions.last[k]; ok && c.Version <= last {
			continue
		}
		r.versions.last[k] = c.Version
		var err error
		if c.Gone {
			err = r.Remove(ctx, c.Presence)
		} else {
			err = r.Add(ctx, c.Presence)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
