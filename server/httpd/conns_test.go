package httpd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// rawFrom opens a TCP connection to the server from the loopback address ip.
func rawFrom(t *testing.T, base, ip string) net.Conn {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatalf("dial from %s: %v", ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// registerFrom registers user from the loopback address ip, on a
// connection closed afterwards, and returns the token.
func registerFrom(t *testing.T, base, user, ip string) string {
	t.Helper()
	c := from(ip)
	defer c.CloseIdleConnections()
	a := call(t, c, "POST", base+"/v1/register", "", []byte(`{"user_id":"`+user+`","password":"password-`+user+`"}`))
	var auth wire.AuthResponse
	if a.status != 201 && a.status != 200 || json.Unmarshal(a.body, &auth) != nil || auth.Token == "" {
		t.Fatalf("register %s: %d %s", user, a.status, a.body)
	}
	return auth.Token
}

// closedWithin reports whether the server closes c within d: a read returns
// EOF or a reset, not a timeout.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// healthzOn asks for /healthz on c and reads the answer, keeping c open.
func healthzOn(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read /healthz answer: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
}

// A keep-alive connection that sends nothing more is closed after the idle
// timeout; before, it stayed open for as long as the client liked.
func TestIdleConnectionClosed(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.IdleTimeout = 300 * time.Millisecond }))
	c := rawFrom(t, srv.URL, "127.0.0.1")
	healthzOn(t, c)
	if !closedWithin(c, 3*time.Second) {
		t.Fatal("an idle keep-alive connection is still open 3 s after its last answer (idle timeout 300 ms)")
	}
}

// A request whose body never ends is cut at the body timeout.
func TestSlowBodyCut(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.BodyTimeout = 500 * time.Millisecond }))
	c := rawFrom(t, srv.URL, "127.0.0.1")
	start := time.Now()
	io.WriteString(c, "POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"user_id\":")
	if !closedWithin(c, 5*time.Second) {
		t.Fatal("a login body never finished still holds its connection 5 s later (body timeout 500 ms)")
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Fatalf("cut after %v, before the body timeout", d)
	}
}

// The body timeout bounds a request, not an upgraded WebSocket after it.
func TestBodyTimeoutSparesWebSockets(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.BodyTimeout = 300 * time.Millisecond }))
	tok := registerFrom(t, srv.URL, "alice", "127.0.0.1")
	sock, status, e := dialFrom(t, srv.URL, tok, "127.0.0.1")
	if sock == nil {
		t.Fatalf("dial: %d %v", status, e)
	}
	time.Sleep(time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := sock.Write(ctx, websocket.MessageText, []byte(`{"type":"ping","id":"p1"}`)); err != nil {
		t.Fatalf("a WebSocket idle for 1 s was cut by the 300 ms body timeout: %v", err)
	}
	for {
		_, data, err := sock.Read(ctx)
		if err != nil {
			t.Fatalf("a WebSocket idle for 1 s was cut by the 300 ms body timeout: %v", err)
		}
		if strings.Contains(string(data), `"pong"`) {
			return
		}
	}
}

// An address at its connection cap gets its next connections closed at
// accept, plain ones and WebSockets alike, while another address is served;
// a connection closed gives its place back.
func TestConnsPerAddrCap(t *testing.T) {
	const limit = 5
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.ConnsPerAddr = limit }))
	tok := registerFrom(t, srv.URL, "alice", "127.0.0.3")
	held := make([]net.Conn, limit)
	for i := range held {
		held[i] = rawFrom(t, srv.URL, "127.0.0.1")
		healthzOn(t, held[i]) // accepted and served: it counts
	}
	over := rawFrom(t, srv.URL, "127.0.0.1")
	io.WriteString(over, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if !closedWithin(over, 3*time.Second) {
		t.Fatal("connection 6 from an address capped at 5 was not closed")
	}
	if _, err := from("127.0.0.1").Get(srv.URL + "/healthz"); err == nil {
		t.Fatal("a request from the address at its cap was answered")
	}
	// Another address is served, plain requests and WebSockets.
	healthzOn(t, rawFrom(t, srv.URL, "127.0.0.2"))
	if sock, status, e := dialFrom(t, srv.URL, tok, "127.0.0.2"); sock == nil {
		t.Fatalf("a WebSocket from another address: %d %v", status, e)
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := from("127.0.0.1").Get(srv.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a place given back is not taken again: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// upgradeRaw opens a WebSocket by hand on a TCP connection, so that the test
// can write any bytes to it, and returns the connection after the 101.
func upgradeRaw(t *testing.T, base, token string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := rawFrom(t, base, "127.0.0.1")
	fmt.Fprintf(c, "GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer %s\r\n\r\n", token)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return c, br
}

// A frame header announcing 2^63-1 bytes, far over the read limit, closes
// the socket at once; before, the server waited for the payload for as long
// as the peer liked.
func TestHugeFrameHeaderClosesTheSocket(t *testing.T) {
	srv := servertest.Start(t)
	tok := registerFrom(t, srv.URL, "alice", "127.0.0.1")
	c, br := upgradeRaw(t, srv.URL, tok)
	hdr := []byte{0x81, 0x80 | 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4}
	if _, err := c.Write(hdr); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err := io.Copy(io.Discard, br) // the hello frame, then the end
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a frame header announcing 2^63-1 bytes left the socket open for 3 s")
	}
}

// A raw NUL inside a JSON string is refused on the WebSocket as over HTTP,
// and the frame changes nothing.
func TestRawNULRefusedOnWebSocket(t *testing.T) {
	srv := servertest.Start(t)
	tok := registerFrom(t, srv.URL, "alice", "127.0.0.1")
	registerFrom(t, srv.URL, "bob", "127.0.0.1")
	conv := wire.DirectConversationID("alice", "bob")
	c := from("127.0.0.1")
	if a := call(t, c, "POST", srv.URL+"/v1/conversations", tok, []byte(`{"type":"direct","members":["bob"]}`)); a.status >= 300 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	body := "{\"message_id\":\"m1\",\"content\":\"a\x00b\"}"
	if a := call(t, c, "POST", srv.URL+"/v1/conversations/"+conv+"/messages", tok, []byte(body)); a.status != http.StatusBadRequest {
		t.Fatalf("HTTP took a raw NUL: %d %s", a.status, a.body)
	}
	sock, status, e := dialFrom(t, srv.URL, tok, "127.0.0.1")
	if sock == nil {
		t.Fatalf("dial: %d %v", status, e)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	frame := "{\"type\":\"send\",\"id\":\"s1\",\"conversation_id\":\"" + conv + "\",\"message_id\":\"m2\",\"content\":\"a\x00b\"}"
	if err := sock.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := sock.Read(ctx)
		if err != nil {
			t.Fatalf("no answer to a frame with a raw NUL: %v", err)
		}
		if strings.Contains(string(data), `"sent"`) {
			t.Fatalf("a frame with a raw NUL was stored: %s", data)
		}
		if strings.Contains(string(data), `"error"`) {
			if !strings.Contains(string(data), `"invalid"`) {
				t.Fatalf("refused with %s, want invalid", data)
			}
			break
		}
	}
	if a := call(t, c, "GET", srv.URL+"/v1/conversations/"+conv+"/messages", tok, nil); strings.Contains(string(a.body), "m2") || strings.Contains(string(a.body), "m1") {
		t.Fatalf("a refused message is in the history: %s", a.body)
	}
}
