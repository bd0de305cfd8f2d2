package httpd

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// writeTimeout bounds one socket write: a peer that cannot take a frame in this
// time is cut off rather than holding its writer forever.
const writeTimeout = 10 * time.Second

// ws upgrades to a WebSocket, authenticates, and runs the connection: a read loop
// that always keeps reading (coder/websocket's rule), and a writer goroutine that
// runs only while the connection has frames queued, so an idle connection costs
// one goroutine.
func (h *Handler) ws(w http.ResponseWriter, r *http.Request) {
	user, err := h.svc.Authenticate(r.Context(), bearer(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sock, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept has answered the client
	}
	sock.SetReadLimit(wire.MaxFrameBytes)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	conn, err := h.svc.Connect(ctx, user, rand.Text()[:12])
	if err != nil {
		sock.Close(websocket.StatusInternalError, "connect failed")
		return
	}
	var writers sync.WaitGroup
	// The Conn never runs two writers at once; a failed write ends the read loop too.
	conn.SetWriter(func() { writers.Go(func() { h.writeFrames(ctx, cancel, sock, conn) }) })

	for {
		typ, data, err := sock.Read(ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			h.svc.Reject(conn, "", wire.Errorf(wire.CodeInvalid, "frames must be JSON text, not binary"))
			continue
		}
		f, err := wire.DecodeFrame(data)
		if err != nil {
			h.svc.Reject(conn, f.ID, err)
			continue
		}
		h.svc.HandleFrame(conn, f)
	}
	cancel()
	h.svc.Disconnect(conn) // closes conn: its last writer closes the socket
	writers.Wait()
}

// writeFrames writes what conn has queued until nothing is left, then returns;
// once conn is closed it flushes what is queued (a shutdown still delivers
// answers) and closes the socket with the Service's code.
func (h *Handler) writeFrames(ctx context.Context, cancel context.CancelFunc, sock *websocket.Conn, conn *server.Conn) {
	m := h.svc.Metrics()
	var frames []server.OutFrame
	for {
		clear(frames)
		var closed bool
		frames, closed = conn.Next(frames)
		if len(frames) == 0 && !closed {
			return
		}
		timeout := writeTimeout
		if closed {
			timeout = time.Second
		}
		for _, f := range frames {
			wctx, wcancel := context.WithTimeout(ctx, timeout)
			err := sock.Write(wctx, websocket.MessageText, f.Data)
			wcancel()
			if err != nil {
				cancel()
				if closed {
					break
				}
				return // the read loop ends and Disconnect closes conn
			}
			if f.Message {
				m.DeliveryLatency.Observe(time.Since(f.Queued).Seconds())
			}
		}
		if closed {
			code, reason := conn.CloseStatus()
			sock.Close(websocket.StatusCode(code), reason)
			return
		}
	}
}
