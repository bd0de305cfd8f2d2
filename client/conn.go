package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/chatterm/chat/wire"
	"github.com/coder/websocket"
)

// CloseTokenRevoked is the close code by which the server says the token is no
// longer valid: do not reconnect until logged in again (docs/protocol.md).
const CloseTokenRevoked = 4001

// Conn is one WebSocket connection speaking wire frames. Reads and writes may
// run concurrently (one reader, any writers); every call takes a context.
type Conn struct {
	ws     *websocket.Conn
	userID string
	rest   []byte // the frames of the last message not yet returned by Read
	buf    []byte // the storage messages are read into, reused
	// protocol is the version the server's hello said (0: none said).
	protocol int
	storeID  string // the server's store identity, from hello ("" from older servers)
	// gate, when the socket could be wrapped, lets a hold pause the reads
	// (readgate.go); nil otherwise.
	gate *readGate
}

// Dial opens the WebSocket at <server>/v1/ws with the token and waits for the
// server's hello. A refused token is a *wire.Error with CodeUnauthorized.
func Dial(ctx context.Context, server, token string, hc *http.Client) (*Conn, error) {
	return dial(ctx, server, token, hc, false)
}

// dial is Dial; gated wraps the socket so that a hold can pause its reads
// (readgate.go), when hc's transport allows.
func dial(ctx context.Context, server, token string, hc *http.Client, gated bool) (*Conn, error) {
	u := strings.TrimRight(server, "/") + "/v1/ws"
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	if hc == nil {
		hc = defaultHTTPClient
	}
	var gate *readGate
	if gated {
		gate = &readGate{}
		if gc := gatedClient(ctx, hc, gate); gc != nil {
			hc = gc
		} else {
			gate = nil
		}
	}
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPClient:      hc,
		HTTPHeader:      http.Header{"Authorization": {"Bearer " + token}},
		CompressionMode: websocket.CompressionDisabled,
	})
	if gate != nil {
		gate.endDials() // a dial still running would outlive the session
	}
	if err != nil {
		if resp != nil && resp.StatusCode >= 300 {
			// The server answers a refused upgrade with its usual error body.
			data, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			return nil, decodeError(resp, data)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect: %w", ctx.Err())
		}
		return nil, &NetError{Server: server, Err: err}
	}
	ws.SetReadLimit(wire.MaxFrameBytes)
	if gate != nil && !gate.isArmed() {
		gate = nil
	}
	c := &Conn{ws: ws, gate: gate}
	f, err := c.Read(ctx)
	if err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("connect: waiting for hello: %w", err)
	}
	if f.Type != wire.TypeHello {
		ws.Close(websocket.StatusProtocolError, "expected hello")
		return nil, fmt.Errorf("connect: the server's first frame is %q, not hello", f.Type)
	}
	c.userID, c.protocol, c.storeID = f.UserID, f.Protocol, f.StoreID
	return c, nil
}

// StoreID is the server's store identity from its hello; "" from a server
// older than store ids. It changes when the server's store is restored or
// rolled back.
func (c *Conn) StoreID() string { return c.storeID }

// UserID is who the server says we are (from hello).
func (c *Conn) UserID() string { return c.userID }

// Protocol is the protocol version the server said in its hello (1 for a
// server from before versions were said).
func (c *Conn) Protocol() int { return max(c.protocol, 1) }

// Read returns the next frame. A message may carry several frames, one per line
// (docs/protocol.md): Read returns them one at a time, in order. A frame that
// does not decode is an error with CodeInvalid after which the caller may keep
// reading (the frames after it in the same message are not lost); a connection
// that ended is a *CloseError. Read must not be called concurrently.
func (c *Conn) Read(ctx context.Context) (wire.Frame, error) {
	for {
		if line, rest, ok := wire.CutFrame(c.rest); ok {
			c.rest = rest
			f, err := wire.DecodeFrame(line)
			if err != nil {
				return wire.Frame{}, err
			}
			return f, nil
		}
		c.rest = nil
		typ, r, err := c.ws.Reader(ctx)
		if err != nil {
			return wire.Frame{}, closeError(ctx, err)
		}
		// Every frame of the last message is decoded: its buffer is free again.
		if c.buf, err = wire.ReadMessage(r, c.buf); err != nil {
			return wire.Frame{}, closeError(ctx, err)
		}
		if typ != websocket.MessageText {
			return wire.Frame{}, wire.Errorf(wire.CodeInvalid, "the server sent a binary frame")
		}
		c.rest = c.buf
	}
}

// Buffered reports whether frames of the last message are still to be
// returned by Read: they are read from the socket already, so a reader that
// waits before handing them over (readgate.go) would only delay them.
func (c *Conn) Buffered() bool {
	_, _, ok := wire.CutFrame(c.rest)
	return ok
}

// Write sends one frame.
func (c *Conn) Write(ctx context.Context, f wire.Frame) error {
	data, err := wire.EncodeFrame(f)
	if err != nil {
		return err
	}
	if err := c.ws.Write(ctx, websocket.MessageText, data); err != nil {
		return closeError(ctx, err)
	}
	return nil
}

// maxFramesPerWrite bounds the frames WriteFrames is given at once by the
// session's writer; maxJoinedBytes bounds one joined message (a frame that
// is bigger goes alone), as the server bounds its own.
const (
	maxFramesPerWrite = 64
	maxJoinedBytes    = 32 << 10
)

// WriteFrames sends frames in order, joined into as few WebSocket messages as
// maxJoinedBytes allows (docs/protocol.md: a message may carry several).
func (c *Conn) WriteFrames(ctx context.Context, fs []wire.Frame) error {
	var msg []byte
	for _, f := range fs {
		data, err := wire.EncodeFrame(f)
		if err != nil {
			return err
		}
		if len(msg) > 0 && len(msg)+1+len(data) > maxJoinedBytes {
			if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
				return closeError(ctx, err)
			}
			msg = msg[:0]
		}
		msg = wire.AppendFrame(msg, data)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		return closeError(ctx, err)
	}
	return nil
}

// Close ends the connection normally.
func (c *Conn) Close() error { return c.ws.Close(websocket.StatusNormalClosure, "") }

// CloseNow drops the connection without the closing handshake.
func (c *Conn) CloseNow() error { return c.ws.CloseNow() }

// CloseError reports a connection that ended; Code is the WebSocket close code
// (-1 when the connection simply broke).
type CloseError struct {
	Code   int
	Reason string
	Err    error
}

func (e *CloseError) Error() string {
	if e.Code < 0 {
		return fmt.Sprintf("connection lost: %v", e.Err)
	}
	if e.Reason != "" {
		return fmt.Sprintf("connection closed by the server (%d: %s)", e.Code, e.Reason)
	}
	return fmt.Sprintf("connection closed by the server (%d)", e.Code)
}

func (e *CloseError) Unwrap() error { return e.Err }

func closeError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: int(ce.Code), Reason: ce.Reason, Err: err}
	}
	return &CloseError{Code: -1, Err: err}
}

// TokenRevoked reports whether err says the server refused the token, on dial
// or by closing with CloseTokenRevoked; a disabled account's token is refused
// too (AccountDisabled says which).
func TokenRevoked(err error) bool {
	var ce *CloseError
	if errors.As(err, &ce) && ce.Code == CloseTokenRevoked {
		return true
	}
	return wire.ErrorCode(err) == wire.CodeUnauthorized || AccountDisabled(err)
}

// AccountDisabled reports whether err says an admin disabled the account:
// logging in again will not help, asking the admin will.
func AccountDisabled(err error) bool { return wire.ErrorCode(err) == wire.CodeAccountDisabled }
