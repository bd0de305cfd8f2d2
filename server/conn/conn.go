// Package conn is the connection runtime: a live connection's queue of
// encoded frames, the hook that starts its writer, how it is closed (close
// codes, slow consumers), the frames held while its catch-up runs, and the
// hub that finds a node's connections by user. It knows nothing of the chat
// domain or the protocol: the transport (server/httpd) runs the writers, the
// protocol engine (server/protocol) queues answers and catch-up, and the
// domain (server) hands frames to users' connections through the Hub.
package conn

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatterm/chat/internal/slicepool"
)

// Close codes the transport uses when the server ends a connection (see
// docs/protocol.md): the code tells the client whether to reconnect.
const (
	CloseGoingAway    = 1001 // server shutting down: reconnect with backoff
	ClosePolicy       = 1008 // slow consumer or flood: reconnect with backoff
	CloseTokenRevoked = 4001 // log in again before reconnecting
)

// Frame is an encoded frame waiting for a connection's writer, with the time it
// was queued (delivery latency is measured from there to the socket write).
type Frame struct {
	Data    []byte
	Queued  time.Time
	Message bool // a message delivery (counts toward the delivery latency histogram)

	// A message frame's place, when known: a live copy held during catch-up is
	// dropped if the catch-up already sent that message.
	ConversationID string
	SeqNo          int64
}

// Conn is one live client connection: the frames waiting for its socket and
// how it ends. Frames wait in a
// queue that grows only as needed (an idle connection holds none); the transport
// registers a hook with SetWriter that the Conn calls to start a writer when
// frames arrive or the connection is closed, and the writer takes them with Next
// until none are left. So an idle connection costs no writer goroutine and no
// preallocated buffer.
type Conn struct {
	ID        string
	UserID    string
	TokenHash string // the login it was opened with: logging out closes it

	limit  int // frames queued before the connection counts as a slow consumer
	closed chan struct{}
	once   sync.Once
	code   atomic.Int32
	reason atomic.Value // string

	mu       sync.Mutex
	queue    []Frame             // frames waiting for the writer
	room     chan struct{}       // closed when the writer takes frames (made by a waiting sendWait)
	writing  bool                // a writer is running (or has ended the connection)
	start    func()              // the transport's hook: start a writer
	ended    bool                // close was called: no more frames are queued
	catching bool                // initial catch-up running: live frames are held
	held     []Frame             // live frames that arrived during catch-up
	caughtUp map[string]seqRange // during catch-up: the seq_nos it sent per conversation
}

// New makes the Conn of a connection that starts with its catch-up (live
// frames are held until EndCatchUp). buffer is how many frames may wait
// before it is closed as a slow consumer.
func New(id, userID, tokenHash string, buffer int) *Conn {
	return &Conn{ID: id, UserID: userID, TokenHash: tokenHash, limit: buffer, closed: make(chan struct{}), catching: true}
}

// Limit is how many frames may wait for the socket.
func (c *Conn) Limit() int { return c.limit }

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
func (c *Conn) Next(spare []Frame) (frames []Frame, closed bool) {
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

// Closed is closed when the server wants the connection ended.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// CloseStatus is the code and reason to close the socket with, once Closed.
func (c *Conn) CloseStatus() (int, string) {
	r, _ := c.reason.Load().(string)
	return int(c.code.Load()), r
}

// Close ends the connection with code and reason: nothing more is queued, and
// the writer writes what is and closes the socket.
func (c *Conn) Close(code int, reason string) {
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
func (c *Conn) push(f Frame) (ok, full bool) {
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
var outQueues = slicepool.New[Frame](16, 256)

// queueFrame appends f to the queue (c.mu held), taking a recycled queue when
// there is none.
func (c *Conn) queueFrame(f Frame) {
	if c.queue == nil {
		c.queue = outQueues.Get()
	}
	c.queue = append(c.queue, f)
}

// TrySend queues a frame without waiting; a connection whose queue is full is a
// slow consumer and is closed rather than waited on.
func (c *Conn) TrySend(f Frame) {
	if _, full := c.push(f); full {
		c.Close(ClosePolicy, "slow consumer: send buffer full")
	}
}

// SendWait queues a frame, waiting for room; false when the connection ended
// first. For answers and catch-up, whose volume is bounded and which run on
// the connection's own worker.
func (c *Conn) SendWait(f Frame) bool {
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

// Live delivers a pushed frame, or holds it while the initial catch-up runs so the
// device sees its backlog before anything newer.
func (c *Conn) Live(f Frame) {
	c.mu.Lock()
	if c.catching {
		if len(c.held) >= c.limit*4 {
			c.mu.Unlock()
			c.Close(ClosePolicy, "slow consumer: backlog too large during catch-up")
			return
		}
		c.held = append(c.held, f)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.TrySend(f)
}

// CaughtUpTo notes that catch-up sent convID's message seq (while it runs).
func (c *Conn) CaughtUpTo(convID string, seq int64) {
	c.mu.Lock()
	if c.catching {
		if c.caughtUp == nil {
			c.caughtUp = map[string]seqRange{}
		}
		r, ok := c.caughtUp[convID]
		if !ok {
			r = seqRange{from: seq, to: seq}
		}
		c.caughtUp[convID] = seqRange{from: min(r.from, seq), to: max(r.to, seq)}
	}
	c.mu.Unlock()
}

// seqRange is the stored messages of a conversation from one seq_no to
// another, all of which the catch-up sent: it reads them in order from a
// device's first undelivered one, which may be above a live message that was
// never pending for the device (its own user's, sent from another device).
type seqRange struct{ from, to int64 }

func (r seqRange) holds(seq int64) bool { return r.from <= seq && seq <= r.to }

// EndCatchUp releases the frames held during catch-up, less the messages the
// catch-up itself sent (a message stored just after the device connected is
// both pending and pushed live). Frames from other nodes carry no place and may
// still come twice; clients dedupe by conversation_id and seq_no.
//
// Live frames keep being held while the held ones are queued, and catching ends
// only when none are left, under the lock: a frame arriving meanwhile can never
// overtake one held before it.
func (c *Conn) EndCatchUp() {
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
			if r, ok := sent[f.ConversationID]; ok && f.SeqNo > 0 && r.holds(f.SeqNo) {
				continue
			}
			if !c.SendWait(f) {
				return
			}
		}
	}
}
