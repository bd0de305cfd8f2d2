package client_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

const password = "correct horse battery"

// httpClient is a client of the test's own whose idle connections close when
// the test ends, before the server stops: the server's graceful shutdown waits
// 5 s for a connection that never sent a request (net/http issue 22682), which
// a shared transport's spare dials would be.
func httpClient(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// register creates a user on the server and returns an API client with its token.
func register(t testing.TB, srv *servertest.Server, user string) *client.API {
	t.Helper()
	hc := httpClient(t)
	resp, err := client.NewAPI(srv.URL, "", hc).Register(context.Background(),
		wire.RegisterRequest{UserID: user, Password: password})
	if err != nil {
		t.Fatalf("register %s: %v", user, err)
	}
	return client.NewAPI(srv.URL, resp.Token, hc)
}

// direct creates the direct conversation of two users, as clients do before
// the first send (docs/protocol.md), and returns its id.
func direct(t *testing.T, api *client.API, peer string) string {
	t.Helper()
	c, err := api.Direct(context.Background(), peer)
	if err != nil {
		t.Fatalf("create direct conversation with %s: %v", peer, err)
	}
	return c.ConversationID
}

// serverMember is user's status in conv as the server reports it to api's
// user; false when it could not be read or user is no member.
func serverMember(api *client.API, conv, user string) (wire.MemberStatus, bool) {
	st, err := api.Status(context.Background(), conv)
	if err != nil {
		return wire.MemberStatus{}, false
	}
	for _, m := range st.Members {
		if m.UserID == user {
			return m, true
		}
	}
	return wire.MemberStatus{}, false
}

// fastBackoff keeps reconnects quick in tests.
var fastBackoff = client.Backoff{Base: 10 * time.Millisecond, Cap: 200 * time.Millisecond, Stable: time.Second}

// device is a running session with its own cache and an event recorder.
type device struct {
	t     *testing.T
	sess  *client.Session
	store *localstore.Store

	mu     sync.Mutex
	events []client.Event
	notify chan struct{}
}

// startDevice runs a session for user against server (a URL: the real server,
// or a proxy in front of it) until the test ends.
func startDevice(t *testing.T, api *client.API, server, user string, opts ...func(*client.SessionConfig)) *device {
	t.Helper()
	d := newDevice(t, api, server, user, opts...)
	d.run()
	return d
}

func newDevice(t *testing.T, api *client.API, server, user string, opts ...func(*client.SessionConfig)) *device {
	t.Helper()
	store := localstore.MustOpen(t, localstore.Options{UserID: user})
	cfg := client.SessionConfig{
		API:          client.NewAPI(server, api.Token(), httpClient(t)),
		Store:        store,
		Backoff:      fastBackoff,
		PingInterval: time.Second,
		Logger:       testLogger(t, user),
	}
	for _, o := range opts {
		o(&cfg)
	}
	sess := client.NewSession(cfg)
	d := &device{t: t, sess: sess, store: store, notify: make(chan struct{}, 1)}
	return d
}

// run starts the session and the event recorder; both stop when the test ends.
func (d *device) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.sess.Run(ctx)
	}()
	go func() {
		for {
			select {
			case ev := <-d.sess.Events():
				d.mu.Lock()
				d.events = append(d.events, ev)
				d.mu.Unlock()
				select {
				case d.notify <- struct{}{}:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	d.t.Cleanup(func() {
		cancel()
		<-done
	})
}

// waitFor polls cond (on every event, and every 20ms) until it holds or the
// deadline passes.
func (d *device) waitFor(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-d.notify:
		case <-tick.C:
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s (state %v)", what, d.sess.State())
		}
	}
}

func (d *device) messageEvents() []wire.Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []wire.Message
	for _, ev := range d.events {
		if m, ok := ev.(client.MessageEvent); ok {
			out = append(out, m.Message)
		}
	}
	return out
}

// states returns the connection states reported so far.
func (d *device) states() []client.ConnStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []client.ConnStatus
	for _, ev := range d.events {
		if s, ok := ev.(client.StateEvent); ok {
			out = append(out, s.State.Status)
		}
	}
	return out
}

func (d *device) cached(conv string) []wire.Message {
	d.t.Helper()
	ms, err := d.store.MessagesAfter(context.Background(), conv, 0, 10000)
	if err != nil {
		d.t.Fatal(err)
	}
	return ms
}

// testLogger shows the session's log with -v when CLIENT_TEST_LOG is set.
func testLogger(t *testing.T, user string) *slog.Logger {
	if os.Getenv("CLIENT_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("user", user)
}

// proxy is a TCP relay in front of the server that a test can take down
// (closing every connection and refusing new ones), freeze (connections stay
// open but nothing passes, like a dead network path), or make lose chosen
// WebSocket frames on their way to the client.
type proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	up     bool
	frozen bool
	conns  []net.Conn
	// rewrite, when set, is given every protocol frame the server sends (each
	// line of a WebSocket message's payload) and returns what the client gets
	// instead: nothing loses the frame, several lines put frames in.
	rewrite func(frame []byte) [][]byte
	// watch, when set, sees every server-to-client WebSocket frame's payload.
	watch func(payload []byte)
	// watchOut, when set before the client connects, sees every
	// client-to-server WebSocket frame's payload (proxyout_test.go).
	watchOut func(payload []byte)
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, up: true}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.set(false)
	})
	return p
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if !p.up {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { p.copy(s, c, p.filterOut); s.Close() }()
		go func() { p.copy(c, s, p.filter); c.Close() }()
	}
}

// copy relays src to dst, holding while frozen; filter, if set, rewrites the
// stream.
func (p *proxy) copy(dst io.Writer, src io.Reader, filter func(io.Writer, io.Reader) error) {
	w := writerFunc(func(b []byte) (int, error) {
		for {
			p.mu.Lock()
			frozen := p.frozen
			p.mu.Unlock()
			if !frozen {
				return dst.Write(b)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	if filter != nil {
		filter(w, src)
		return
	}
	io.Copy(w, src)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// filter passes the server's HTTP upgrade answer, then WebSocket frames one by
// one (server frames are unmasked, compression is off, and a message is one
// WebSocket frame), losing the protocol frames drop picks: a message that
// carries several loses only those lines.
func (p *proxy) filter(w io.Writer, r io.Reader) error {
	br := bufio.NewReader(r)
	upgraded := false
	for first := true; ; first = false {
		line, err := br.ReadString('\n')
		if _, werr := io.WriteString(w, line); err != nil || werr != nil {
			return err
		}
		if first {
			upgraded = strings.Contains(line, " 101 ")
		}
		if line == "\r\n" {
			break
		}
	}
	if !upgraded {
		// Plain HTTP (keep-alive answers follow): nothing to pick frames from.
		_, err := io.Copy(w, br)
		return err
	}
	for {
		var hdr [14]byte
		if _, err := io.ReadFull(br, hdr[:2]); err != nil {
			return err
		}
		n := int(hdr[1] & 0x7f)
		h := 2
		switch n {
		case 126:
			if _, err := io.ReadFull(br, hdr[2:4]); err != nil {
				return err
			}
			n, h = int(binary.BigEndian.Uint16(hdr[2:4])), 4
		case 127:
			if _, err := io.ReadFull(br, hdr[2:10]); err != nil {
				return err
			}
			n, h = int(binary.BigEndian.Uint64(hdr[2:10])), 10
		}
		if n < 0 || n > 1<<24 {
			return fmt.Errorf("proxy: frame of %d bytes is not what this test expects", n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return err
		}
		p.mu.Lock()
		rewrite, watch := p.rewrite, p.watch
		p.mu.Unlock()
		if watch != nil {
			watch(payload)
		}
		if rewrite != nil {
			var kept []byte
			for line := range wire.Frames(payload) {
				for _, out := range rewrite(line) {
					kept = wire.AppendFrame(kept, out)
				}
			}
			if len(kept) == 0 {
				continue
			}
			payload = kept
			h = putLength(hdr[:], len(payload))
		}
		if _, err := w.Write(append(hdr[:h:h], payload...)); err != nil {
			return err
		}
	}
}

// putLength writes an unmasked WebSocket frame's payload length after hdr[0]
// and returns the header's size.
func putLength(hdr []byte, n int) int {
	switch {
	case n < 126:
		hdr[1] = byte(n)
		return 2
	case n <= 0xffff:
		hdr[1] = 126
		binary.BigEndian.PutUint16(hdr[2:4], uint16(n))
		return 4
	default:
		hdr[1] = 127
		binary.BigEndian.PutUint64(hdr[2:10], uint64(n))
		return 10
	}
}

// set brings the proxy up or down; down cuts every open connection.
func (p *proxy) set(up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = up
	if !up {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// freeze stops (or resumes) all traffic on open connections without closing
// them; new connections are refused while frozen.
func (p *proxy) freeze(frozen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = frozen
	p.up = !frozen
}

// setDrop loses the server's frames drop picks.
func (p *proxy) setDrop(drop func([]byte) bool) {
	p.setRewrite(func(frame []byte) [][]byte {
		if drop(frame) {
			return nil
		}
		return [][]byte{frame}
	})
}

func (p *proxy) setRewrite(rewrite func([]byte) [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewrite = rewrite
}

func (p *proxy) setWatch(watch func(payload []byte)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watch = watch
}
