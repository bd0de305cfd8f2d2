package inmem

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.Registry = (*Registry)(nil)

// Registry maps users to their connections and each connection to its node, and
// keeps the reverse set per node so DropNode touches only that node's entries.
type Registry struct {
	shards [nShards]regShard

	// nodeMu guards nodes. Add, Remove and DropNode take it after a user shard's
	// lock (never the other way round); Nodes, the hot call, never takes it.
	nodeMu sync.Mutex
	nodes  map[string]map[connKey]struct{}

	seenMu sync.Mutex
	seen   map[string]time.Time // user → when a connection of theirs last went away

	versions versions // Apply's
}

type regShard struct {
	mu    sync.RWMutex
	users map[string]*userConns
	_     [32]byte
}

type userConns struct {
	conns map[string]string // conn id → node id
	// nodes is the sorted, distinct set of conns' nodes, rebuilt on every change
	// and never modified in place, so Nodes can hand it out without copying.
	nodes []string
}

type connKey struct{ user, conn string }

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{} }

func (u *userConns) rebuild() {
	nodes := make([]string, 0, 1)
	for _, n := range u.conns {
		if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	u.nodes = slices.Clip(nodes)
}

func checkPresence(p server.Presence) error {
	if p.UserID == "" || p.ConnID == "" || p.NodeID == "" {
		return fmt.Errorf("registry: presence %+v: %w", p, errEmpty)
	}
	return nil
}

// Add records the connection; adding a known connection again moves it to p.NodeID.
func (r *Registry) Add(_ context.Context, p server.Presence) error {
	if err := checkPresence(p); err != nil {
		return err
	}
	sh := &r.shards[shardOf(p.UserID)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.users == nil {
		sh.users = make(map[string]*userConns)
	}
	u := sh.users[p.UserID]
	if u == nil {
		u = &userConns{conns: make(map[string]string, 1)}
		sh.users[p.UserID] = u
	}
	old, had := u.conns[p.ConnID]
	u.conns[p.ConnID] = p.NodeID
	u.rebuild()

	k := connKey{p.UserID, p.ConnID}
	r.nodeMu.Lock()
	defer r.nodeMu.Unlock()
	if had && old != p.NodeID {
		delete(r.nodes[old], k)
	}
	if r.nodes == nil {
		r.nodes = make(map[string]map[connKey]struct{})
	}
	set := r.nodes[p.NodeID]
	if set == nil {
		set = make(map[connKey]struct{})
		r.nodes[p.NodeID] = set
	}
	set[k] = struct{}{}
	return nil
}

// Remove forgets the connection; an unknown one is not an error.
func (r *Registry) Remove(_ context.Context, p server.Presence) error {
	if err := checkPresence(p); err != nil {
		return err
	}
	r.sawLast(p.UserID, time.Now())
	sh := &r.shards[shardOf(p.UserID)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	node := p.NodeID
	if u := sh.users[p.UserID]; u != nil {
		if n, ok := u.conns[p.ConnID]; ok {
			node = n
			delete(u.conns, p.ConnID)
			if len(u.conns) == 0 {
				delete(sh.users, p.UserID)
			} else {
				u.rebuild()
			}
		}
	}
	r.nodeMu.Lock()
	delete(r.nodes[node], connKey{p.UserID, p.ConnID})
	if len(r.nodes[node]) == 0 {
		delete(r.nodes, node)
	}
	r.nodeMu.Unlock()
	return nil
}

// Nodes returns, for each user with a live connection, its nodes (sorted). The
// slices are shared with the registry: callers must not modify them.
func (r *Registry) Nodes(_ context.Context, userIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(userIDs))
	for _, id := range userIDs {
		sh := &r.shards[shardOf(id)]
		sh.mu.RLock()
		if u := sh.users[id]; u != nil {
			out[id] = u.nodes
		}
		sh.mu.RUnlock()
	}
	return out, nil
}

// DropNode removes every connection registered on nodeID.
func (r *Registry) DropNode(_ context.Context, nodeID string) error {
	if nodeID == "" {
		return fmt.Errorf("registry drop node: %w", errEmpty)
	}
	r.nodeMu.Lock()
	set := r.nodes[nodeID]
	delete(r.nodes, nodeID)
	r.nodeMu.Unlock()
	for k := range set {
		sh := &r.shards[shardOf(k.user)]
		sh.mu.Lock()
		// The connection may have been re-added on another node meanwhile.
		if u := sh.users[k.user]; u != nil && u.conns[k.conn] == nodeID {
			r.sawLast(k.user, time.Now())
			delete(u.conns, k.conn)
			if len(u.conns) == 0 {
				delete(sh.users, k.user)
			} else {
				u.rebuild()
			}
		}
		sh.mu.Unlock()
	}
	return nil
}

// sawLast records that a connection of user went away at t.
func (r *Registry) sawLast(user string, t time.Time) {
	r.seenMu.Lock()
	defer r.seenMu.Unlock()
	if r.seen == nil {
		r.seen = make(map[string]time.Time)
	}
	r.seen[user] = t
}

// LastSeen returns when a connection of each user last went away. The map
// lives as long as the process, one entry per user who ever connected (this
// registry is one node's, which restarts empty): no expiry is needed.
func (r *Registry) LastSeen(_ context.Context, userIDs []string) (map[string]time.Time, error) {
	r.seenMu.Lock()
	defer r.seenMu.Unlock()
	out := make(map[string]time.Time, len(userIDs))
	for _, u := range userIDs {
		if t, ok := r.seen[u]; ok {
			out[u] = t
		}
	}
	return out, nil
}
