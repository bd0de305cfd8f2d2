package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatterm/chat/internal/slicepool"
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

	// A message frame's place, when known: a live copy held during catch-up is
	// dropped if the catch-up already sent that message.
	ConversationID string
	SeqNo          int64
}

// Conn is one live client connection as the Service sees it. Frames wait in a
// queue that grows only as needed (an idle connection holds none); the transport
// registers a hook with SetWriter that the Conn calls to start a writer when
// frames arrive or the connection is closed, and the writer takes them with Next
// until none are left. So an idle connection costs no writer goroutine and no
// preallocated buffer.
type Conn struct {
	ID        string
	UserID    string
	tokenHash string // the login it was opened with: logging out closes it

	limit  int // frames queued before the connection counts as a slow consumer
	closed chan struct{}
	once   sync.Once
	code   atomic.Int32
	reason atomic.Value // string

	mu       sync.Mutex
	queue    []OutFrame       // frames waiting for the writer
	room     chan struct{}    // closed when the writer takes frames (made by a waiting sendWait)
	writing  bool             // a writer is running (or has ended the connection)
	start    func()           // the transport's hook: start a writer
	ended    bool             // close was called: no more frames are queued
	catching bool             // initial catch-up running: live frames are held
	held     []OutFrame       // live frames that arrived during catch-up
	caughtUp map[string]int64 // during catch-up: the highest seq_no it sent per conversation
	work     []request        // queued requests (sends, acks, syncs) run in order by one worker
	working  bool

	nextSweep atomic.Int64 // unix nanoseconds: when the delivery worker next checks its pending rows
}

func newConn(id, userID string, buffer int) *Conn {
	return &Conn{ID: id, UserID: userID, limit: buffer, closed: make(chan struct{}), catching: true}
}

// SetWriter registers the transport's hook that starts a writer; it is called
// (never twice at once) when frames are queued or the connection is closed while
// no writer runs, including at once if that is already the case.
func (c *Conn) SetWriter(start func()) {
	c.mu.Lock()
	c.start = start
	run := c.startLocked(len(c.queue) > 0 || c.ended)
	c.mu.Unlock()
	if run != nil {
		run()
	}
}

// startLocked marks a writer as running and returns the hook to call (after
// unlocking) when one is needed and none runs.
func (c *Conn) startLocked(needed bool) func() {
	if !needed || c.writing || c.start == nil {
		return nil
	}
	c.writing = true
	return c.start
}

// Next hands the writer the queued frames, reusing spare's storage for the next
// ones (spare is the writer's, emptied: the last frames it was given). closed
// says the connection is to be closed once they are written. When nothing is
// queued and it is not closed, the writer is done: it must return without
// touching spare again (its storage goes back to a pool), and the next frame
// starts a new one.
func (c *Conn) Next(spare []OutFrame) (frames []OutFrame, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	frames = c.queue
	if c.room != nil {
		close(c.room)
		c.room = nil
	}
	if len(frames) == 0 && !c.ended {
		c.writing = false
		c.queue = nil // an idle connection keeps no buffer
		outQueues.Put(frames)
		outQueues.Put(spare) // the writer is done with it
		return nil, false
	}
	c.queue = spare[:0]
	return frames, c.ended
}

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
		c.mu.Lock()
		c.ended = true
		run := c.startLocked(true)
		c.mu.Unlock()
		close(c.closed)
		if run != nil {
			run()
		}
	})
}

// push queues a frame unless the queue is full or the connection closed.
func (c *Conn) push(f OutFrame) (ok, full bool) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return false, false
	}
	if len(c.queue) >= c.limit {
		c.mu.Unlock()
		return false, true
	}
	c.queueFrame(f)
	run := c.startLocked(true)
	c.mu.Unlock()
	if run != nil {
		run()
	}
	return true, false
}

// outQueues recycles the frame queues of connections whose writer went idle: a
// burst queues tens of frames, and growing a fresh queue for each one was a
// tenth of the server's allocated bytes under load. An idle connection holds
// none.
var outQueues = slicepool.New[OutFrame](16, 256)

// queueFrame appends f to the queue (c.mu held), taking a recycled queue when
// there is none.
func (c *Conn) queueFrame(f OutFrame) {
	if c.queue == nil {
		c.queue = outQueues.Get()
	}
	c.queue = append(c.queue, f)
}

// trySend queues a frame without waiting; a connection whose queue is full is a
// slow consumer and is closed rather than waited on.
func (c *Conn) trySend(f OutFrame) {
	if _, full := c.push(f); full {
		c.close(ClosePolicy, "slow consumer: send buffer full")
	}
}

// sendWait queues a frame, waiting for room: used by catch-up, whose volume is
// bounded by pages and which runs on the connection's own worker.
func (c *Conn) sendWait(f OutFrame) bool {
	for {
		c.mu.Lock()
		if c.ended {
			c.mu.Unlock()
			return false
		}
		if len(c.queue) < c.limit {
			c.queueFrame(f)
			run := c.startLocked(true)
			c.mu.Unlock()
			if run != nil {
				run()
			}
			return true
		}
		// Full, so a writer runs: its next Next closes room.
		if c.room == nil {
			c.room = make(chan struct{})
		}
		room := c.room
		c.mu.Unlock()
		select {
		case <-room:
		case <-c.closed:
			return false
		}
	}
}

// live delivers a pushed frame, or holds it while the initial catch-up runs so the
// device sees its backlog before anything newer.
func (c *Conn) live(f OutFrame) {
	c.mu.Lock()
	if c.catching {
		if len(c.held) >= c.limit*4 {
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

// caughtUpTo notes that catch-up sent convID's message seq (while it runs).
func (c *Conn) caughtUpTo(convID string, seq int64) {
	c.mu.Lock()
	if c.catching {
		if c.caughtUp == nil {
			c.caughtUp = map[string]int64{}
		}
		c.caughtUp[convID] = max(c.caughtUp[convID], seq)
	}
	c.mu.Unlock()
}

// endCatchUp releases the frames held during catch-up, less the messages the
// catch-up itself sent (a message stored just after the device connected is
// both pending and pushed live). Frames from other nodes carry no place and may
// still come twice; clients dedupe by conversation_id and seq_no.
//
// Live frames keep being held while the held ones are queued, and catching ends
// only when none are left, under the lock: a frame arriving meanwhile can never
// overtake one held before it.
func (c *Conn) endCatchUp() {
	for {
		c.mu.Lock()
		held := c.held
		c.held = nil
		if len(held) == 0 {
			c.catching = false
			c.caughtUp = nil
			c.mu.Unlock()
			return
		}
		sent := c.caughtUp
		c.mu.Unlock()
		for _, f := range held {
			if f.SeqNo > 0 && f.SeqNo <= sent[f.ConversationID] {
				continue
			}
			if !c.sendWait(f) {
				return
			}
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

// presences lists, when called, this node's connections as registry entries.
func (h *hub) presences(nodeID string) func() []Presence {
	return func() []Presence {
		h.mu.RLock()
		defer h.mu.RUnlock()
		out := make([]Presence, 0, h.count.Load())
		for u, set := range h.users {
			for c := range set {
				out = append(out, Presence{UserID: u, ConnID: c.ID, NodeID: nodeID})
			}
		}
		return out
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

// closeToken closes this node's connections opened with the token.
func (h *hub) closeToken(userID, tokenHash string, code int, reason string) {
	h.mu.RLock()
	var hit []*Conn
	for c := range h.users[userID] {
		if c.tokenHash == tokenHash {
			hit = append(hit, c)
		}
	}
	h.mu.RUnlock()
	for _, c := range hit {
		c.close(code, reason)
	}
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
