package httpd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/server/httpd"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func register(t testing.TB, base, user string) string {
	t.Helper()
	body, _ := json.Marshal(wire.RegisterRequest{UserID: user, Password: "password-" + user})
	resp, err := http.Post(base+"/v1/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var auth wire.AuthResponse
	if err := json.NewDecoder(resp.Body).Decode(&auth); err != nil || auth.Token == "" {
		t.Fatalf("register %s: %d %v", user, resp.StatusCode, err)
	}
	return auth.Token
}

type device struct {
	t    *testing.T
	sock *websocket.Conn
	rest []wire.Frame // frames of the last message not yet returned by next
}

func connect(t *testing.T, base, token string) *device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sock, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.CloseNow() })
	d := &device{t: t, sock: sock}
	if f := d.next(); f.Type != wire.TypeHello {
		t.Fatalf("first frame %q, want hello", f.Type)
	}
	return d
}

func (d *device) send(f wire.Frame) {
	d.t.Helper()
	data, _ := wire.EncodeFrame(f)
	d.write(data)
}

// write sends one WebSocket message as it stands.
func (d *device) write(msg []byte) {
	d.t.Helper()
	if err := d.sock.Write(context.Background(), websocket.MessageText, msg); err != nil {
		d.t.Fatal(err)
	}
}

func (d *device) next() wire.Frame {
	d.t.Helper()
	for len(d.rest) == 0 {
		d.rest = d.message()
	}
	f := d.rest[0]
	d.rest = d.rest[1:]
	return f
}

// message reads one WebSocket message and returns its frames (one per line).
func (d *device) message() []wire.Frame {
	d.t.Helper()
	frames, _ := d.messageData()
	return frames
}

// messageData is message with the message's bytes.
func (d *device) messageData() ([]wire.Frame, []byte) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := d.sock.Read(ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	var frames []wire.Frame
	for line := range wire.Frames(data) {
		f, err := wire.DecodeFrame(line)
		if err != nil {
			d.t.Fatal(err)
		}
		frames = append(frames, f)
	}
	return frames, data
}

// until reads frames up to the first of type typ and returns those before it.
func (d *device) until(typ string) []wire.Frame {
	d.t.Helper()
	var before []wire.Frame
	for {
		f := d.next()
		if f.Type == typ {
			return before
		}
		before = append(before, f)
	}
}

// An ack's status frame goes to the sender and to the acker's other devices, not
// back to the device that acked.
func TestAckStatusSkipsTheAckingDevice(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv.URL, "alice"), register(t, srv.URL, "bob")
	a1, a2, b := connect(t, srv.URL, alice), connect(t, srv.URL, alice), connect(t, srv.URL, bob)
	conv := wire.DirectConversationID("alice", "bob")
	b.send(wire.Frame{Type: wire.TypeSend, ID: "s1", ConversationID: conv, MessageID: "m1", Content: "hi"})
	b.until(wire.TypeSent)
	for _, d := range []*device{a1, a2} {
		d.until(wire.TypeMessage)
	}
	a1.send(wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: 1})
	for name, d := range map[string]*device{"bob": b, "alice's other device": a2} {
		var f wire.Frame
		for f = d.next(); f.Type != wire.TypeStatus; f = d.next() {
		}
		if f.Status.UserID != "alice" || f.Status.LastDeliveredSeq != 1 {
			t.Fatalf("%s got status %+v, want alice delivered 1", name, f.Status)
		}
	}
	// A sync runs on the connection's worker after the ack, so any status the ack
	// pushed to this device is queued before the synced answer.
	a1.send(wire.Frame{Type: wire.TypeSync, ID: "y"})
	for _, f := range a1.until(wire.TypeSynced) {
		if f.Type == wire.TypeStatus {
			t.Fatalf("the acking device got its own ack's status %+v", f.Status)
		}
	}
}

// Acks sent in a burst: the sender sees the boundary only move forward, with at
// most one status per ack, and end at the last ack.
func TestAckBurstEndsAtTheLastAck(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv.URL, "alice"), register(t, srv.URL, "bob")
	a, b := connect(t, srv.URL, alice), connect(t, srv.URL, bob)
	conv := wire.DirectConversationID("alice", "bob")
	const n = 30
	for i := 1; i <= n; i++ {
		b.send(wire.Frame{Type: wire.TypeSend, ID: "s", ConversationID: conv, MessageID: "m" + strconv.Itoa(i), Content: "hi"})
		b.until(wire.TypeSent)
	}
	for i := 1; i <= n; i++ {
		if f := a.until(wire.TypeMessage); len(f) > 0 && f[0].Type == wire.TypeError {
			t.Fatalf("alice got an error: %+v", f[0].Error)
		}
	}
	for i := 1; i <= n; i++ {
		a.send(wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: int64(i)})
	}
	var last int64
	for statuses := 0; last < n; statuses++ {
		f := b.next()
		if f.Type != wire.TypeStatus {
			continue
		}
		if f.Status.LastDeliveredSeq <= last {
			t.Fatalf("status went from %d to %d", last, f.Status.LastDeliveredSeq)
		}
		last = f.Status.LastDeliveredSeq
		if statuses > n {
			t.Fatalf("more status frames than acks")
		}
	}
}

// A peer that stops reading is cut off once a write has blocked for the write
// timeout, even while its send buffer still has room: its writer must not hang
// on the socket for ever.
func TestStalledReaderIsCutOff(t *testing.T) {
	httpd.SetWriteTimeout(t, 300*time.Millisecond)
	srv := servertest.Start(t)
	alice, bob := register(t, srv.URL, "alice"), register(t, srv.URL, "bob")
	a := connect(t, srv.URL, alice)

	// Bob's socket takes little before TCP pushes back, so the server's writes
	// block once its own send buffer (4 MiB at most here) is full.
	smallWindow := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sock, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/v1/ws", &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: smallWindow.DialContext}},
		HTTPHeader: http.Header{"Authorization": {"Bearer " + bob}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.CloseNow()
	sock.SetReadLimit(-1)

	// 400 messages of 15 KB: about 6 MB, more than the socket buffers hold and
	// fewer frames than the 512 that would close Bob as a slow consumer.
	const n = 400
	conv := wire.DirectConversationID("alice", "bob")
	content := strings.Repeat("x", 15_000)
	for i := range n {
		a.send(wire.Frame{Type: wire.TypeSend, ID: strconv.Itoa(i), ConversationID: conv, MessageID: "m" + strconv.Itoa(i), Content: content})
	}
	time.Sleep(2 * time.Second) // Bob stalls well past the write timeout

	got := 0
	for {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, data, err := sock.Read(rctx)
		rcancel()
		if err != nil {
			break
		}
		got += bytes.Count(data, []byte(`"type":"message"`))
	}
	if got >= n {
		t.Fatalf("Bob read all %d messages after stalling: the blocked write was never cut off", got)
	}
	t.Logf("Bob read %d of %d messages before the server closed the socket", got, n)
}
