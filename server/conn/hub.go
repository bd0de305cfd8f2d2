package conn

import (
	"sync"
	"sync/atomic"
)

// Hub is this node's connections by user.
type Hub struct {
	mu    sync.RWMutex
	users map[string]map[*Conn]struct{}
	count atomic.Int64
	// closedWith is CloseAll's code and reason once it ran: a connection
	// added afterwards (its socket was accepted just before the shutdown and
	// registered just after) is closed at once instead of living on unseen.
	closedWith *closeStatus
}

type closeStatus struct {
	code   int
	reason string
}

// NewHub makes an empty Hub.
func NewHub() *Hub { return &Hub{users: map[string]map[*Conn]struct{}{}} }

// Add makes c findable by its user, or closes it if the hub was closed.
func (h *Hub) Add(c *Conn) {
	h.mu.Lock()
	if st := h.closedWith; st != nil {
		h.mu.Unlock()
		c.Close(st.code, st.reason)
		return
	}
	set := h.users[c.UserID]
	if set == nil {
		set = map[*Conn]struct{}{}
		h.users[c.UserID] = set
	}
	set[c] = struct{}{}
	h.mu.Unlock()
	h.count.Add(1)
}

// Remove forgets c.
func (h *Hub) Remove(c *Conn) {
	h.mu.Lock()
	if set := h.users[c.UserID]; set != nil {
		if _, ok := set[c]; ok {
			delete(set, c)
			h.count.Add(-1)
		}
		if len(set) == 0 {
			delete(h.users, c.UserID)
		}
	}
	h.mu.Unlock()
}

// Deliver hands f to every connection of the users, except skip.
func (h *Hub) Deliver(users []string, f Frame, skip *Conn) {
	h.mu.RLock()
	var targets []*Conn
	for _, u := range users {
		for c := range h.users[u] {
			if c != skip {
				targets = append(targets, c)
			}
		}
	}
	h.mu.RUnlock()
	for _, c := range targets {
		c.Live(f)
	}
}

// All lists the connections.
func (h *Hub) All() []*Conn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]*Conn, 0, h.count.Load())
	for _, set := range h.users {
		for c := range set {
			out = append(out, c)
		}
	}
	return out
}

// Count is the number of connections.
func (h *Hub) Count() int64 { return h.count.Load() }

// Online reports whether the user has a connection here.
func (h *Hub) Online(user string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.users[user]) > 0
}

// CloseToken closes the user's connections opened with the token.
func (h *Hub) CloseToken(userID, tokenHash string, code int, reason string) {
	h.closeWhere(userID, func(c *Conn) bool { return c.TokenHash == tokenHash }, code, reason)
}

// CloseUser closes every connection of a user.
func (h *Hub) CloseUser(userID string, code int, reason string) {
	h.closeWhere(userID, func(*Conn) bool { return true }, code, reason)
}

// closeWhere closes the user's connections that match, outside the lock
// (Close runs the writer hook).
func (h *Hub) closeWhere(userID string, match func(*Conn) bool, code int, reason string) {
	h.mu.RLock()
	var hit []*Conn
	for c := range h.users[userID] {
		if match(c) {
			hit = append(hit, c)
		}
	}
	h.mu.RUnlock()
	for _, c := range hit {
		c.Close(code, reason)
	}
}

// CloseAll closes every connection, and any added after it (it is the
// shutdown).
func (h *Hub) CloseAll(code int, reason string) {
	h.mu.Lock()
	h.closedWith = &closeStatus{code, reason}
	var all []*Conn
	for _, set := range h.users {
		for c := range set {
			all = append(all, c)
		}
	}
	h.mu.Unlock()
	for _, c := range all {
		c.Close(code, reason)
	}
}
