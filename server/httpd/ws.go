package httpd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/internal/slicepool"
	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/wire"
)

// defaultWriteTimeout bounds one burst of socket writes: a peer that cannot take
// the frames in this time is cut off rather than holding its writer forever.
const defaultWriteTimeout = 10 * time.Second

// shortWriteTimeout replaces defaultWriteTimeout when set (tests; nanoseconds).
// Atomic: writers of servers a test has stopped may still be reading it.
var shortWriteTimeout atomic.Int64

func writeTimeout() time.Duration {
	if d := shortWriteTimeout.Load(); d > 0 {
		return time.Duration(d)
	}
	return defaultWriteTimeout
}

// ws upgrades to a WebSocket, authenticates, and runs the connection: a read loop
// that always keeps reading (coder/websocket's rule), and a writer goroutine that
// runs only while the connection has frames queued, so an idle connection costs
// one goroutine.
func (h *Handler) ws(w http.ResponseWriter, r *http.Request) {
	user, err := h.svc.Authenticate(r.Context(), wsToken(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Counted before the upgrade: a refused socket costs one HTTP answer.
	release, err := h.sockets.admit(user, clientAddr(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var raw net.Conn
	sock, err := websocket.Accept(smallBuffers{w, &raw}, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		release()
		return // Accept has answered the client
	}
	sock.SetReadLimit(wire.MaxFrameBytes)
	ctx, cancel := context.WithCancel(context.Background())
	sess, err := h.engine.Connect(ctx, user, wsToken(r), rand.Text()[:12])
	if err != nil {
		cancel()
		sock.Close(websocket.StatusInternalError, "connect failed")
		release()
		return
	}
	// The socket gets its own goroutine and this handler returns: net/http then
	// lets go of its 8 KiB of connection buffers and the upgrade request, which
	// would otherwise stay live for the life of the WebSocket.
	go func() {
		defer release()
		h.serveSocket(&socket{sock: sock, raw: raw, conn: sess, ctx: ctx, cancel: cancel, io: context.WithoutCancel(ctx)})
	}()
}

// socket is one accepted WebSocket and the Service's view of it.
//
// Reads and writes get a context that is never cancelled (io): given one
// that can be, coder/websocket arms and disarms a context.AfterFunc on every
// call, which with context.WithTimeout per write burst was 9% of the server's
// CPU at 10,000 unbatched messages/s. Instead, ending ctx closes the socket once
// (which ends any read or write), and a write burst is bounded by a deadline on
// the TCP connection.
type socket struct {
	sock   *websocket.Conn
	raw    net.Conn // the hijacked TCP connection under sock, for write deadlines
	conn   *protocol.Session
	ctx    context.Context // ends when the connection is done
	cancel context.CancelFunc
	io     context.Context // ctx without its end: for reads and writes
}

func (h *Handler) serveSocket(s *socket) {
	defer s.cancel()
	stop := context.AfterFunc(s.ctx, func() { s.sock.CloseNow() })
	defer stop()
	// The Conn never runs two writers at once; a failed write ends the read loop
	// too. The hook runs on whichever goroutine queued a frame, after the Conn
	// let go of its lock, so it can come late: after the socket is done and
	// writers.Wait has begun, which a WaitGroup does not allow (the race
	// detector caught it under load). ended, under wmu, turns such a late
	// writer away; the socket it would have written to is closed by then.
	var (
		wmu     sync.Mutex
		ended   bool
		writers sync.WaitGroup
	)
	s.conn.SetWriter(func() {
		wmu.Lock()
		defer wmu.Unlock()
		if ended {
			return
		}
		writers.Add(1)
		h.writers.Go(func() {
			defer writers.Done()
			h.writeFrames(s)
		})
	})

	for h.readMessage(s.io, s.sock, s.conn) {
	}
	s.cancel()
	h.engine.Disconnect(s.conn) // closes conn: its last writer closes the socket
	wmu.Lock()
	ended = true
	wmu.Unlock()
	writers.Wait()
}

// readBufs holds the buffers messages are read into: a read loop takes one only
// while it reads and handles a message, so an idle connection holds none, and a
// busy one allocates nothing per message. One grown past 64 KiB by a huge
// message is not kept.
var readBufs = slicepool.New[byte](4<<10, 64<<10)

// readMessage reads one message and hands its frames to the Service, in order;
// false when the socket is done.
func (h *Handler) readMessage(ctx context.Context, sock *websocket.Conn, sess *protocol.Session) bool {
	typ, r, err := sock.Reader(ctx)
	if err != nil {
		return false
	}
	data, err := wire.ReadMessage(r, readBufs.Get())
	defer func() { readBufs.Put(data[:0]) }() // bytes hold no pointers: nothing to zero
	if err != nil {
		return false
	}
	if typ != websocket.MessageText {
		h.engine.Reject(sess, "", wire.Errorf(wire.CodeInvalid, "frames must be JSON text, not binary"))
		return true
	}
	// One frame per line; each line stands alone, so a bad one is answered with
	// its error and the rest are still handled, in order. Decoded frames copy
	// what they keep, so the buffer goes back to the pool afterwards.
	for line := range wire.Frames(data) {
		f, err := wire.DecodeFrame(line)
		if err != nil {
			h.engine.Reject(sess, f.ID, err)
			continue
		}
		h.engine.HandleFrame(sess, f)
	}
	return true
}

// maxBatchBytes caps one WebSocket message the writer builds from several
// frames; a frame bigger than this goes alone.
const maxBatchBytes = 32 << 10

// batchBufs holds the buffers batches are joined in: a writer takes one only
// while it writes, so an idle connection holds none.
var batchBufs = slicepool.New[byte](maxBatchBytes, maxBatchBytes)

// writeFrames writes what conn has queued until nothing is left, then returns;
// once conn is closed it flushes what is queued (a shutdown still delivers
// answers) and closes the socket with the Service's code. Frames taken together
// are joined into as few messages as maxBatchBytes allows (one per line,
// docs/protocol.md): one WebSocket header, one flush and one write system call
// for many frames.
func (h *Handler) writeFrames(s *socket) {
	sock, c, ioCtx := s.sock, s.conn, s.io
	m := h.svc.Metrics()
	var frames []conn.Frame
	var buf []byte
	defer func() { batchBufs.Put(buf[:0]) }()
	for {
		clear(frames)
		var closed bool
		frames, closed = c.Next(frames)
		if len(frames) == 0 && !closed {
			return
		}
		timeout := writeTimeout()
		if closed {
			timeout = time.Second
		}
		// One deadline for the frames taken together (at most the queue's bound):
		// a timer per frame was a measurable share of the write path.
		s.raw.SetWriteDeadline(time.Now().Add(timeout))
		for rest := frames; len(rest) > 0; {
			n := batchLen(rest, maxBatchBytes)
			batch := rest[:n]
			rest = rest[n:]
			data := batch[0].Data
			if n > 1 {
				if buf == nil {
					buf = batchBufs.Get()
				}
				buf = buf[:0]
				for _, f := range batch {
					buf = wire.AppendFrame(buf, f.Data)
				}
				data = buf
			}
			err := sock.Write(ioCtx, websocket.MessageText, data)
			if err != nil {
				s.cancel()
				if closed {
					break
				}
				return // the read loop ends and Disconnect closes conn
			}
			now := time.Now()
			for _, f := range batch {
				if f.Message {
					m.DeliveryLatency.Observe(now.Sub(f.Queued).Seconds())
				}
			}
		}
		s.raw.SetWriteDeadline(time.Time{})
		if closed {
			code, reason := c.CloseStatus()
			sock.Close(websocket.StatusCode(code), reason)
			return
		}
	}
}

// batchLen says how many of frames (at least one) go into the next message: as
// many as fit in limit bytes joined, or the first alone when it is bigger.
func batchLen(frames []conn.Frame, limit int) int {
	n, size := 1, len(frames[0].Data)
	for n < len(frames) && size+1+len(frames[n].Data) <= limit {
		size += 1 + len(frames[n].Data)
		n++
	}
	return n
}

// Buffer sizes of a WebSocket connection. net/http's are 4 KiB each and a socket
// keeps them for its whole life: the largest part of an idle connection's memory.
// Frames bigger than a buffer still work (bufio reads and writes through); they
// cost an extra system call.
const (
	wsReadBuffer  = 1 << 10
	wsWriteBuffer = 1 << 10
)

// smallBuffers hands coder/websocket a hijacked connection with small buffers in
// place of net/http's.
type smallBuffers struct {
	http.ResponseWriter
	raw *net.Conn // set to the hijacked connection
}

func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response cannot be hijacked")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	*w.raw = conn
	// net/http's deadline for reading the request (node's BodyTimeout) may
	// still be on the connection (net/http clears it today as it stops its
	// background read, but documents it as the caller's job): a WebSocket
	// lives longer than a request (TCP keep-alive, on by default for accepted
	// connections, finds a dead peer).
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("clear the request's read deadline: %w", err)
	}
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("flush the upgrade answer: %w", err)
	}
	// Bytes the client sent right behind its upgrade request (a first frame,
	// when net/http's background read or the request's own read took them) are
	// already in net/http's reader. They go in front of the connection itself:
	// coder/websocket's Accept resets the reader returned here onto the returned
	// connection, so a reader holding them would be dropped, and the socket
	// would read its first frame from the middle (seen as "unexpected rsv bits").
	var c net.Conn = conn
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		c = &prefixedConn{Conn: conn, r: io.MultiReader(bytes.NewReader(bytes.Clone(b)), conn)}
	}
	// Every read goes through a frameGuard. On the connection, not on the
	// reader returned: Accept resets that reader onto the connection.
	c = &prefixedConn{Conn: c, r: &frameGuard{r: c, limit: wire.MaxFrameBytes}}
	return c, bufio.NewReadWriter(bufio.NewReaderSize(c, wsReadBuffer), bufio.NewWriterSize(conn, wsWriteBuffer)), nil
}

// prefixedConn is a connection read through r: one whose first bytes were
// read before it was handed over, or whose frames are checked (frameGuard).
type prefixedConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
