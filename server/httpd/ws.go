package httpd

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// writeTimeout bounds one socket write: a peer that cannot take a frame in this
// time is cut off rather than holding its writer forever.
const writeTimeout = 10 * time.Second

// ws upgrades to a WebSocket, authenticates, and runs the connection: a read loop
// that always keeps reading (coder/websocket's rule) and a writer fed by the
// connection's bounded queue.
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
	defer h.svc.Disconnect(conn)

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer cancel() // a failed write ends the read loop too
		h.writeLoop(ctx, sock, conn)
	}()

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
	<-writerDone
}

func (h *Handler) writeLoop(ctx context.Context, sock *websocket.Conn, conn *server.Conn) {
	m := h.svc.Metrics()
	for {
		select {
		case f := <-conn.Out():
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err := sock.Write(wctx, websocket.MessageText, f.Data)
			cancel()
			if err != nil {
				return
			}
			if f.Message {
				m.DeliveryLatency.Observe(time.Since(f.Queued).Seconds())
			}
		case <-conn.Closed():
			// Flush what is already queued (a shutdown still delivers answers), then close.
			for {
				select {
				case f := <-conn.Out():
					wctx, cancel := context.WithTimeout(ctx, time.Second)
					err := sock.Write(wctx, websocket.MessageText, f.Data)
					cancel()
					if err != nil {
						return
					}
					continue
				default:
				}
				break
			}
			code, reason := conn.CloseStatus()
			sock.Close(websocket.StatusCode(code), reason)
			return
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.Canceled) {
				sock.Close(websocket.StatusNormalClosure, "")
			}
			return
		}
	}
}
