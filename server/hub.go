package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Close codes the transport uses when the Service ends a connection (see
// docs/protocol.md): the code tells the client whether to reconnect.
const (
	CloseGoingAway    = 1001 // server shutting down: reconnect with backoff
	ClosePolicy       = 1008 // slow consumer or flood: reconnect with backoff
	CloseTokenRevoked = 4001 // log in again before reconnecting
)

// OutFrame is an encoded frame waiting for a connection's writer, with the time it
// was queued (delivery latency is measured from there to the socket write).
type OutFrame struct {
	Data    []byte
	Queued  time.Time
	Message bool // a message delivery (counts toward the delivery latency histogram)
}

// Conn is one live client connection as the Service sees it. The transport reads
// Out and writes to the socket, and closes the socket when Closed is signalled.
type Conn struct {
	ID     string
	UserID string

	out    chan OutFrame
	closed chan struct{}
	once   sync.Once
	code   atomic.Int32
	reason atomic.Value // string

	mu       sync.Mutex
	catching bool       // initial catch-up running: live frames are held
	held     []OutFrame // live frames that arrived during catch-up
	work     []func()   // queued requests (sends, syncs) run in order by one worker
	working  bool
}

func newConn(id, userID string, buffer int) *Conn {
	return &Conn{ID: id, UserID: userID, out: make(chan OutFrame, buffer), closed: make(chan struct{}), catching: true}
}

// Out yields encoded frames to write. The transport must also watch Closed.
func (c *Conn) Out() <-chan OutFrame { return c.out }

// Closed is closed when the Service wants the connection ended.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// CloseStatus is the code and reason to close the socket with, once Closed.
func (c *Conn) CloseStatus() (int, string) {
	r, _ := c.reason.Load().(string)
	return int(c.code.Load()), r
}

func (c *Conn) close(code int, reason string) {
	c.once.Do(func() {
		c.code.Store(int32(code))
		c.reason.Store(reason)
		close(c.closed)
	})
}

// trySend queues a frame without waiting; a connection whose buffer is full is a
// slow consumer and is closed rather than waited on.
func (c *Conn) trySend(f OutFrame) {
	select {
	case c.out <- f:
	default:
		c.close(ClosePolicy, "slow consumer: send buffer full")
	}
}

// sendWait queues a frame, waiting for room: used by catch-up, whose volume is
// bounded by pages and which runs on the connection's own worker.
func (c *Conn) sendWait(f OutFrame) bool {
	select {
	case c.out <- f:
		return true
	case <-c.closed:
		return false
	}
}

// live delivers a pushed frame, or holds it while the initial catch-up runs so the
// device sees its backlog before anything newer.
func (c *Conn) live(f OutFrame) {
	c.mu.Lock()
	if c.catching {
		if len(c.held) >= cap(c.out)*4 {
			c.mu.Unlock()
			c.close(ClosePolicy, "slow consumer: backlog too large during catch-up")
			return
		}
		c.held = append(c.held, f)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.trySend(f)
}

// endCatchUp releases the frames held during catch-up (duplicates of what the
// catch-up sent are possible; clients dedupe by conversation_id and seq_no).
func (c *Conn) endCatchUp() {
	c.mu.Lock()
	held := c.held
	c.held, c.catching = nil, false
	c.mu.Unlock()
	for _, f := range held {
		if !c.sendWait(f) {
			return
		}
	}
}

// hub is this node's connections by user.
type hub struct {
	mu    sync.RWMutex
	users map[string]map[*Conn]struct{}
	count atomic.Int64
}

func newHub() *hub { return &hub{users: map[string]map[*Conn]struct{}{}} }

func (h *hub) add(c *Conn) {
	h.mu.Lock()
	set := h.users[c.UserID]
	if set == nil {
		set = map[*Conn]struct{}{}
		h.users[c.UserID] = set
	}
	set[c] = struct{}{}
	h.mu.Unlock()
	h.count.Add(1)
}

func (h *hub) remove(c *Conn) {
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

// deliver hands f to every local connection of the users, except skip.
func (h *hub) deliver(users []string, f OutFrame, skip *Conn) {
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
		c.live(f)
	}
}

// online reports whether the user has a connection on this node.
func (h *hub) online(user string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.users[user]) > 0
}

func (h *hub) deliverEnvelope(env Envelope) {
	h.deliver(env.UserIDs, OutFrame{Data: env.Frame, Queued: time.Now(), Message: true}, nil)
}

func (h *hub) closeAll(code int, reason string) {
	h.mu.RLock()
	var all []*Conn
	for _, set := range h.users {
		for c := range set {
			all = append(all, c)
		}
	}
	h.mu.RUnlock()
	for _, c := range all {
		c.close(code, reason)
	}
}
