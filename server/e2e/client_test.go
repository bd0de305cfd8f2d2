package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// api is a tiny HTTP client for tests: the real wire types over real HTTP.
type api struct {
	t     testing.TB
	base  string
	token string
	user  string
}

func register(t testing.TB, srv *servertest.Server, user string) *api {
	t.Helper()
	a := &api{t: t, base: srv.URL}
	var resp wire.AuthResponse
	if st := a.do("POST", "/v1/register", wire.RegisterRequest{UserID: user, Password: "password-" + user}, &resp); st != http.StatusCreated {
		t.Fatalf("register %s: status %d", user, st)
	}
	a.token, a.user = resp.Token, user
	return a
}

// do sends a request and decodes a 2xx answer into out (or a wire.ErrorResponse
// for other statuses, when out is one). It returns the status.
func (a *api) do(method, path string, body, out any) int {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	_, isErr := out.(*wire.ErrorResponse)
	if out != nil && len(data) > 0 && (resp.StatusCode < 300) != isErr {
		if err := json.Unmarshal(data, out); err != nil {
			a.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	if resp.StatusCode >= 300 && !isErr && resp.StatusCode != http.StatusNoContent {
		var e wire.ErrorResponse
		if json.Unmarshal(data, &e) != nil || e.Error == nil || e.Error.Code == "" {
			a.t.Fatalf("%s %s: status %d without a JSON error body: %q", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode
}

func (a *api) send(conv, msgID, content string) wire.SendResponse {
	a.t.Helper()
	var r wire.SendResponse
	if st := a.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: msgID, Content: content}, &r); st != http.StatusCreated && st != http.StatusOK {
		a.t.Fatalf("send: status %d", st)
	}
	return r
}

func (a *api) direct(peer string) string {
	a.t.Helper()
	var c wire.Conversation
	if st := a.do("POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{peer}}, &c); st >= 300 {
		a.t.Fatalf("create direct: %d", st)
	}
	return c.ConversationID
}

func (a *api) group(name string, members ...string) string {
	a.t.Helper()
	var c wire.Conversation
	if st := a.do("POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Group, Name: name, Members: members}, &c); st != http.StatusCreated {
		a.t.Fatalf("create group: %d", st)
	}
	return c.ConversationID
}

func (a *api) status(conv string) map[string]wire.MemberStatus {
	a.t.Helper()
	var r wire.StatusResponse
	if st := a.do("GET", "/v1/conversations/"+conv+"/status", nil, &r); st != 200 {
		a.t.Fatalf("status: %d", st)
	}
	out := map[string]wire.MemberStatus{}
	for _, m := range r.Members {
		out[m.UserID] = m
	}
	return out
}

func (a *api) history(conv string, before int64, limit int) wire.HistoryResponse {
	a.t.Helper()
	var r wire.HistoryResponse
	if st := a.do("GET", fmt.Sprintf("/v1/conversations/%s/messages?before_seq=%d&limit=%d", conv, before, limit), nil, &r); st != 200 {
		a.t.Fatalf("history: %d", st)
	}
	return r
}

// wsClient is a real WebSocket connection that collects every frame it receives.
type wsClient struct {
	t      testing.TB
	conn   *websocket.Conn
	frames chan wire.Frame
	ctx    context.Context
	cancel context.CancelFunc
	nextID int
	mu     sync.Mutex
	err    error // why the read loop ended; set before frames is closed
}

func dial(t testing.TB, a *api) *wsClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	url := "ws" + strings.TrimPrefix(a.base, "http") + "/v1/ws"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + a.token}}})
	if err != nil {
		cancel()
		t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(wire.MaxFrameBytes)
	c := &wsClient{t: t, conn: conn, frames: make(chan wire.Frame, 10000), ctx: ctx, cancel: cancel}
	go func() {
		defer close(c.frames)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				c.err = err
				return
			}
			// A message carries one frame or several, one per line.
			for line := range wire.Frames(data) {
				f, err := wire.DecodeFrame(line)
				if err != nil {
					t.Errorf("server sent an undecodable frame %q: %v", line, err)
					return
				}
				c.frames <- f
			}
		}
	}()
	t.Cleanup(c.close)
	if f := c.next(func(f wire.Frame) bool { return true }); f.Type != wire.TypeHello || f.UserID != a.user {
		t.Fatalf("first frame = %+v, want hello for %s", f, a.user)
	}
	return c
}

func (c *wsClient) close() {
	c.conn.Close(websocket.StatusNormalClosure, "")
	c.cancel()
}

func (c *wsClient) write(f wire.Frame) {
	c.t.Helper()
	data, err := wire.EncodeFrame(f)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.Write(c.ctx, websocket.MessageText, data); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *wsClient) writeRaw(data string) {
	c.t.Helper()
	if err := c.conn.Write(c.ctx, websocket.MessageText, []byte(data)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *wsClient) id() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	return fmt.Sprintf("r%d", c.nextID)
}

// send sends over the socket without waiting; it returns the request id.
func (c *wsClient) send(conv, msgID, content string) string {
	id := c.id()
	c.write(wire.Frame{Type: wire.TypeSend, ID: id, ConversationID: conv, MessageID: msgID, Content: content})
	return id
}

// sendWait sends and waits for the "sent" answer.
func (c *wsClient) sendWait(conv, msgID, content string) wire.Frame {
	c.t.Helper()
	id := c.send(conv, msgID, content)
	f := c.next(func(f wire.Frame) bool { return f.ID == id })
	if f.Type != wire.TypeSent {
		c.t.Fatalf("send answered %+v", f)
	}
	return f
}

// wait bounds every wait for a frame. moto, the DynamoDB stand-in of the
// production runs, takes tens to hundreds of milliseconds per write and slows as
// its state grows, so those runs get more room.
var wait = func() time.Duration {
	if os.Getenv("CHATSERVER_TEST_BACKEND") == "production" {
		return 30 * time.Second
	}
	return 5 * time.Second
}()

// next returns the first frame matching pred, skipping others; it fails the test
// after a timeout.
func (c *wsClient) next(pred func(wire.Frame) bool) wire.Frame {
	c.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatalf("connection closed while waiting")
			}
			if pred(f) {
				return f
			}
		case <-deadline:
			c.t.Fatalf("no matching frame within %v", wait)
		}
	}
}

func isMessage(conv string) func(wire.Frame) bool {
	return func(f wire.Frame) bool { return f.Type == wire.TypeMessage && f.Message.ConversationID == conv }
}

func isStatus(conv, user string) func(wire.Frame) bool {
	return func(f wire.Frame) bool {
		return f.Type == wire.TypeStatus && f.ConversationID == conv && f.Status.UserID == user
	}
}

// quiet asserts that no frame matching pred arrives for a short while.
func (c *wsClient) quiet(pred func(wire.Frame) bool, d time.Duration) {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case f, ok := <-c.frames:
			if ok && pred(f) {
				c.t.Fatalf("unexpected frame %+v", f)
			}
		case <-deadline:
			return
		}
	}
}

// count counts the frames matching pred that arrive within d.
func (c *wsClient) count(pred func(wire.Frame) bool, d time.Duration) int {
	c.t.Helper()
	deadline := time.After(d)
	n := 0
	for {
		select {
		case f, ok := <-c.frames:
			if ok && pred(f) {
				n++
			}
		case <-deadline:
			return n
		}
	}
}

// tick derives the tick of seq from the other members' boundaries: in a
// group, the minimum over the others.
func tick(st map[string]wire.MemberStatus, sender string, seq int64) string {
	read, delivered := true, true
	for u, m := range st {
		if u == sender {
			continue
		}
		read = read && seq <= m.LastReadSeq
		delivered = delivered && seq <= m.LastDeliveredSeq
	}
	switch {
	case read:
		return "blue"
	case delivered:
		return "double"
	}
	return "single"
}
