package node_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/internal/testcert"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// logBuffer collects a logger's lines for a test to read while the server
// still writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// httpsNode starts a node serving HTTPS with a pair from files signed by a
// CA of the test's own, and returns the node, the pair and a client trusting
// the CA.
func httpsNode(t *testing.T, logs *logBuffer) (*servertest.Server, *node.CertFile, *testcert.CA, [2]string, *http.Client) {
	t.Helper()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	paths := [2]string{filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")}
	ca.Leaf(t, "127.0.0.1").WriteFiles(t, paths[0], paths[1])
	log := slog.New(slog.NewTextHandler(logs, nil))
	cf, err := node.LoadCertFile(paths[0], paths[1], log)
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.TLS = cf.TLSConfig()
		c.Logger = log
	}))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections) // before the server stops: see client/helpers_test.go
	return srv, cf, ca, paths, &http.Client{Transport: tr}
}

// servedSerial is the serial of the certificate a new connection gets.
func servedSerial(t *testing.T, addr string, ca *testcert.CA) *big.Int {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

// An HTTPS node on port 0: it says https in its URL and start log line,
// serves the API, and a certificate swapped on disk is served to new
// connections while a WebSocket opened before keeps working. A pair that
// does not load leaves the working one in place, with one log line.
func TestHTTPSNodeReloadsItsCertificate(t *testing.T) {
	var logs logBuffer
	srv, cf, ca, paths, hc := httpsNode(t, &logs)
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("URL %q", srv.URL)
	}
	if !strings.Contains(logs.String(), `msg="chatserver listening"`) || !strings.Contains(logs.String(), "url="+srv.URL) {
		t.Fatalf("start log line without the https URL:\n%s", logs.String())
	}
	resp, err := hc.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz over https: %s", resp.Status)
	}
	// Plain HTTP to the HTTPS port gets nothing of the API.
	if resp, err := http.Get("http://" + srv.Node.Addr() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP served on the HTTPS listener")
		}
	}

	body, _ := json.Marshal(wire.RegisterRequest{UserID: "alice", Password: "password-alice"})
	resp, err = hc.Post(srv.URL+"/v1/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var auth wire.AuthResponse
	err = json.NewDecoder(resp.Body).Decode(&auth)
	resp.Body.Close()
	if err != nil || auth.Token == "" {
		t.Fatalf("register over https: %d %v", resp.StatusCode, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock, _, err := websocket.Dial(ctx, "wss"+strings.TrimPrefix(srv.URL, "https")+"/v1/ws",
		&websocket.DialOptions{HTTPClient: hc, HTTPHeader: http.Header{"Authorization": {"Bearer " + auth.Token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.CloseNow()
	if _, data, err := sock.Read(ctx); err != nil || !bytes.Contains(data, []byte(`"type":"hello"`)) {
		t.Fatalf("first frame %q %v", data, err)
	}
	first := servedSerial(t, srv.Node.Addr(), ca)

	next := ca.Leaf(t, "127.0.0.1")
	next.WriteFiles(t, paths[0], paths[1])
	cf.ReloadIfChanged()
	if got := servedSerial(t, srv.Node.Addr(), ca); got.Cmp(next.Cert.SerialNumber) != 0 || got.Cmp(first) == 0 {
		t.Fatalf("after the swap a new connection got serial %v, want %v (first %v)", got, next.Cert.SerialNumber, first)
	}
	ping(ctx, t, sock, "after-swap")

	// A renewal gone wrong: the old pair stays, and says so once.
	testcert.WriteAtomic(t, paths[0], []byte("not a certificate"))
	if err := cf.Reload(); err == nil {
		t.Fatal("a broken certificate file reloaded")
	}
	cf.ReloadIfChanged() // nothing changed since: no second try, no second line
	if got := servedSerial(t, srv.Node.Addr(), ca); got.Cmp(next.Cert.SerialNumber) != 0 {
		t.Fatalf("after a failed reload the serial is %v, want %v", got, next.Cert.SerialNumber)
	}
	if n := strings.Count(logs.String(), "tls certificate not reloaded"); n != 1 {
		t.Fatalf("%d log lines for one failed reload:\n%s", n, logs.String())
	}
	ping(ctx, t, sock, "after-failure")
}

// ping sends a ping frame on the socket and waits for its pong.
func ping(ctx context.Context, t *testing.T, sock *websocket.Conn, id string) {
	t.Helper()
	f, _ := json.Marshal(wire.Frame{Type: wire.TypePing, ID: id})
	if err := sock.Write(ctx, websocket.MessageText, f); err != nil {
		t.Fatalf("ping %s on the old socket: %v", id, err)
	}
	for {
		_, data, err := sock.Read(ctx)
		if err != nil {
			t.Fatalf("the old socket broke waiting for pong %s: %v", id, err)
		}
		if bytes.Contains(data, []byte(`"type":"pong"`)) && bytes.Contains(data, []byte(`"id":"`+id+`"`)) {
			return
		}
	}
}

func TestLoadCertFileRefusesBadPairs(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	a, b := ca.Leaf(t, "127.0.0.1"), ca.Leaf(t, "127.0.0.1")
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	certA, keyB := write("a.pem", a.CertPEM), write("b.key", b.KeyPEM)
	for name, pair := range map[string][2]string{
		"Missing":    {filepath.Join(dir, "none.pem"), keyB},
		"Mismatched": {certA, keyB},
		"NotPEM":     {write("junk.pem", []byte("junk")), keyB},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := node.LoadCertFile(pair[0], pair[1], nil); err == nil {
				t.Fatal("loaded")
			} else if !strings.Contains(err.Error(), pair[0]) {
				t.Fatalf("error does not name the file: %v", err)
			}
		})
	}
	cf, err := node.LoadCertFile(write("b.pem", b.CertPEM), keyB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Current().Leaf.SerialNumber; got.Cmp(b.Cert.SerialNumber) != 0 {
		t.Fatalf("serial %v, want %v", got, b.Cert.SerialNumber)
	}
}

// TLS 1.2 is served with forward-secret AEAD suites only: a client offering
// nothing but a CBC suite with a SHA-1 MAC is refused, one offering GCM or
// ChaCha20 is served, and TLS 1.1 is refused.
func TestTLSSuitesAEADOnly(t *testing.T) {
	var logs logBuffer
	srv, _, ca, _, _ := httpsNode(t, &logs)
	dial := func(min, max uint16, suite uint16) error {
		c, err := tls.Dial("tcp", srv.Node.Addr(), &tls.Config{RootCAs: ca.Pool(), MinVersion: min, MaxVersion: max, CipherSuites: []uint16{suite}})
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, s := range []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA} {
		if err := dial(tls.VersionTLS12, tls.VersionTLS12, s); err == nil {
			t.Errorf("TLS 1.2 with %s was served", tls.CipherSuiteName(s))
		}
	}
	for _, s := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384} {
		if err := dial(tls.VersionTLS12, tls.VersionTLS12, s); err != nil {
			t.Errorf("TLS 1.2 with %s: %v", tls.CipherSuiteName(s), err)
		}
	}
	if err := dial(tls.VersionTLS10, tls.VersionTLS11, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA); err == nil {
		t.Error("TLS 1.1 was served")
	}
}
