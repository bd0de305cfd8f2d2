package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/chatterm/chat/wire"
)

// portsPerAddr is how many connections one loopback source address carries before
// the next is used: Linux hands out ephemeral ports from 32768–60999, and leaving
// some room keeps short-lived HTTP connections working beside the WebSockets.
const portsPerAddr = 25000

// dialer spreads connections over 127.0.0.x source addresses, one HTTP transport
// per address, so one run can hold more connections than one address has ports.
type dialer struct {
	clients []*http.Client
	next    atomic.Uint64
	api     *http.Client // short requests (register, history): a pooled client
	// helloWait bounds the wait for the hello after the upgrade; 0: 30 s. The
	// storm's clients wait longer: thousands of connects queue at the nodes.
	helloWait time.Duration
}

func newDialer(conns int) *dialer {
	n := (conns + portsPerAddr - 1) / portsPerAddr
	n = max(n, 1)
	d := &dialer{}
	for i := range n {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}
		if n == 1 {
			local = nil // one address: let the kernel pick, as any client would
		}
		nd := &net.Dialer{LocalAddr: local, Timeout: 30 * time.Second}
		tr := &http.Transport{DialContext: nd.DialContext, MaxIdleConnsPerHost: 4, DisableCompression: true}
		d.clients = append(d.clients, &http.Client{Transport: tr})
	}
	d.api = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxIdleConns: 64}, Timeout: 60 * time.Second}
	return d
}

// dial opens an authenticated WebSocket to base (http://host:port) and waits for
// the hello frame, so a returned connection is known to be accepted.
func (d *dialer) dial(ctx context.Context, base, token string) (*wsConn, error) {
	c := d.clients[d.next.Add(1)%uint64(len(d.clients))]
	url := "ws" + strings.TrimPrefix(base, "http") + "/v1/ws"
	sock, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient:      c,
		HTTPHeader:      http.Header{"Authorization": {"Bearer " + token}},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	sock.SetReadLimit(wire.MaxFrameBytes)
	w := &wsConn{sock: sock}
	hctx, cancel := context.WithTimeout(ctx, cmp.Or(d.helloWait, 30*time.Second))
	defer cancel()
	f, err := w.read(hctx)
	if err != nil {
		sock.CloseNow()
		return nil, fmt.Errorf("wait for hello: %w", err)
	}
	if f.Type != wire.TypeHello {
		sock.CloseNow()
		return nil, fmt.Errorf("first frame is %q, want hello", f.Type)
	}
	return w, nil
}

// wsConn is one client socket. Writes may come from several goroutines (the
// library allows it); reads from one.
type wsConn struct {
	sock *websocket.Conn
	rest []byte // frames of the last message read that read has not returned yet
	buf  []byte // the storage messages are read into, reused
}

func (w *wsConn) write(ctx context.Context, f wire.Frame) error {
	data, err := wire.EncodeFrame(f)
	if err != nil {
		return err
	}
	return w.sock.Write(ctx, websocket.MessageText, data)
}

// writeMessage sends frames already joined into one message (wire.AppendFrame).
func (w *wsConn) writeMessage(ctx context.Context, msg []byte) error {
	return w.sock.Write(ctx, websocket.MessageText, msg)
}

// read returns the next frame; a message of several frames is returned one
// frame at a time, in order. A line that does not decode is an error, and the
// next read goes on with the frames after it.
func (w *wsConn) read(ctx context.Context) (wire.Frame, error) {
	for {
		if line, rest, ok := wire.CutFrame(w.rest); ok {
			w.rest = rest
			return wire.DecodeFrame(line)
		}
		w.rest = nil
		_, r, err := w.sock.Reader(ctx)
		if err != nil {
			return wire.Frame{}, err
		}
		// Every frame of the last message is decoded: its buffer is free again.
		if w.buf, err = wire.ReadMessage(r, w.buf); err != nil {
			return wire.Frame{}, err
		}
		w.rest = w.buf
	}
}

// buffered reports whether the last message read holds frames that read has
// not returned yet: a reader that answers in batches flushes when it is false.
func (w *wsConn) buffered() bool {
	_, _, ok := wire.CutFrame(w.rest)
	return ok
}

// api is the JSON HTTP API as the bench uses it.
type api struct {
	base string
	hc   *http.Client
}

func (a *api) do(ctx context.Context, method, path, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e wire.ErrorResponse
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			return fmt.Errorf("%s %s: %d %w", method, path, resp.StatusCode, e.Error)
		}
		return fmt.Errorf("%s %s: HTTP %d: %.200s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := wire.DecodeAnswer(data, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

const benchPassword = "chatbench-password"

// register creates the users (or logs in where they exist, so a rerun against
// the same server works) and returns their tokens.
func (a *api) register(ctx context.Context, users []string) ([]string, error) {
	tokens := make([]string, len(users))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, u := range users {
		g.Go(func() error {
			var resp wire.AuthResponse
			err := a.do(gctx, "POST", "/v1/register", "", wire.RegisterRequest{UserID: u, Password: benchPassword}, &resp)
			if err != nil && strings.Contains(err.Error(), string(wire.CodeConflict)) {
				err = a.do(gctx, "POST", "/v1/login", "", wire.LoginRequest{UserID: u, Password: benchPassword}, &resp)
			}
			if err != nil {
				return fmt.Errorf("register %s (the server needs --registration open): %w", u, err)
			}
			tokens[i] = resp.Token
			return nil
		})
	}
	return tokens, g.Wait()
}

func (a *api) createConversation(ctx context.Context, token string, req wire.CreateConversationRequest) (string, error) {
	var c wire.Conversation
	if err := a.do(ctx, "POST", "/v1/conversations", token, req, &c); err != nil {
		return "", err
	}
	return c.ConversationID, nil
}

// dialAll opens one connection per token, at most limit dials at a time.
func (d *dialer) dialAll(ctx context.Context, base string, tokens []string, limit int) ([]*wsConn, error) {
	conns := make([]*wsConn, len(tokens))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i, t := range tokens {
		g.Go(func() error {
			c, err := d.dial(gctx, base, t)
			conns[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		closeAll(conns)
		return nil, err
	}
	return conns, nil
}

func closeAll(conns []*wsConn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c != nil {
			wg.Go(func() { c.sock.CloseNow() })
		}
	}
	wg.Wait()
}

// closeGracefully runs the close handshake on every connection at once (each
// waits for the server's close frame, at most a few seconds).
func closeGracefully(conns []*wsConn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c != nil {
			wg.Go(func() { c.sock.Close(websocket.StatusNormalClosure, "") })
		}
	}
	wg.Wait()
}
