package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"math/big"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testcert"
	"github.com/chatterm/chat/wire"
)

// tlsServer is chatserver run in-process with --tls-cert and --tls-key on a
// pair from a CA of the test's own, with the CA file chat would be given.
type tlsServer struct {
	m         *Main
	logs      *testenv.LogBuffer
	ca        *testcert.CA
	cert, key string
	caFile    string
	chat      client.Config
}

func startTLS(t *testing.T, pollEvery time.Duration, env map[string]string) *tlsServer {
	t.Helper()
	dir := t.TempDir()
	s := &tlsServer{logs: &testenv.LogBuffer{}, ca: testcert.NewCA(t), cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem")}
	s.ca.Leaf(t, "127.0.0.1").WriteFiles(t, s.cert, s.key)
	s.caFile = s.ca.WriteFile(t, dir)
	s.m = NewMain(s.logs)
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--registration", "open"}
	if env == nil {
		args = append(args, "--tls-cert", s.cert, "--tls-key", s.key)
	}
	if err := s.m.ParseFlags(args, func(k string) string {
		return map[string]string{"CHATSERVER_TLS_CERT": s.cert, "CHATSERVER_TLS_KEY": s.key}[k]
	}); err != nil {
		t.Fatal(err)
	}
	s.m.tls.pollEvery = pollEvery
	if err := s.m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var err error
	if s.chat, err = (client.Config{CAFile: s.caFile}).WithTLS(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.chat.HTTPClient.CloseIdleConnections()
		if err := s.m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func (s *tlsServer) url() string { return "https://" + s.m.Addr() }

// serial is the serial of the certificate a new connection gets.
func (s *tlsServer) serial(t *testing.T) *big.Int {
	t.Helper()
	c, err := tls.Dial("tcp", s.m.Addr(), &tls.Config{RootCAs: s.ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

// waitSerial waits until new connections get want.
func (s *tlsServer) waitSerial(t *testing.T, want *big.Int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.serial(t).Cmp(want) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("new connections still get serial %v, not %v; log:\n%s", s.serial(t), want, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// session registers a user and opens a WebSocket the way chat does, trusting
// the CA file.
func (s *tlsServer) session(ctx context.Context, t *testing.T, user string) *client.Conn {
	t.Helper()
	resp, err := client.NewAPI(s.url(), "", s.chat.HTTPClient).Register(ctx, wire.RegisterRequest{UserID: user, Password: "password-" + user})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Dial(ctx, s.url(), resp.Token, s.chat.HTTPClient)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// pingPong checks a WebSocket is still up: a ping is answered.
func pingPong(ctx context.Context, t *testing.T, c *client.Conn, id string) {
	t.Helper()
	if err := c.Write(ctx, wire.Frame{Type: wire.TypePing, ID: id}); err != nil {
		t.Fatalf("ping %s: %v", id, err)
	}
	for {
		f, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("the socket opened before the reload broke: %v", err)
		}
		if f.Type == wire.TypePong && f.ID == id {
			return
		}
	}
}

// chatserver --tls-cert/--tls-key serves HTTPS; a renewed pair written over
// the files is picked up by the poll, new connections get it, and a
// WebSocket opened before stays up. A broken pair is logged once and the
// working one kept.
func TestMainServesHTTPSAndReloadsChangedFiles(t *testing.T) {
	s := startTLS(t, 20*time.Millisecond, nil)
	if !strings.Contains(s.logs.String(), `url=`+s.url()) {
		t.Fatalf("start log without the https URL:\n%s", s.logs.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := client.NewAPI(s.url(), "", s.chat.HTTPClient).Health(ctx); err != nil {
		t.Fatalf("healthz over https: %v", err)
	}
	live := s.session(ctx, t, "alice")

	next := s.ca.Leaf(t, "127.0.0.1")
	next.WriteFiles(t, s.cert, s.key)
	s.waitSerial(t, next.Cert.SerialNumber)
	pingPong(ctx, t, live, "after-reload")
	if !strings.Contains(s.logs.String(), `msg="tls certificate reloaded"`) {
		t.Fatalf("no reload line:\n%s", s.logs.String())
	}

	// The pair above is two files written one after the other: a poll between
	// them may have seen a new certificate with the old key and said so once.
	// Only what is logged from here on counts.
	before := len(s.logs.String())
	after := func() string { return s.logs.String()[before:] }
	testcert.WriteAtomic(t, s.key, []byte("-----BEGIN EC PRIVATE KEY-----\ntruncated"))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(after(), "tls certificate not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("a broken key was not reported:\n%s", s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // several polls more: no more lines
	if n := strings.Count(after(), "tls certificate not reloaded"); n != 1 {
		t.Fatalf("%d lines for one broken key:\n%s", n, after())
	}
	if got := s.serial(t); got.Cmp(next.Cert.SerialNumber) != 0 {
		t.Fatalf("serving %v after a failed reload, want %v", got, next.Cert.SerialNumber)
	}
	pingPong(ctx, t, live, "after-failure")
}

// SIGHUP reloads at once, whatever the poll; the pair comes from
// CHATSERVER_TLS_CERT and CHATSERVER_TLS_KEY here.
func TestMainReloadsCertificateOnSIGHUP(t *testing.T) {
	s := startTLS(t, time.Hour, map[string]string{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	live := s.session(ctx, t, "alice")
	next := s.ca.Leaf(t, "127.0.0.1")
	next.WriteFiles(t, s.cert, s.key)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.waitSerial(t, next.Cert.SerialNumber)
	pingPong(ctx, t, live, "after-hup")
}

func TestParseFlagsTLSErrors(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	a, b := ca.Leaf(t, "127.0.0.1"), ca.Leaf(t, "127.0.0.1")
	certA, keyA := filepath.Join(dir, "a.pem"), filepath.Join(dir, "a.key")
	certB, keyB := filepath.Join(dir, "b.pem"), filepath.Join(dir, "b.key")
	a.WriteFiles(t, certA, keyA)
	b.WriteFiles(t, certB, keyB)
	for name, tc := range map[string]struct {
		args []string
		says string
	}{
		"CertWithoutKey":    {[]string{"--tls-cert", certA}, "--tls-cert needs --tls-key"},
		"KeyWithoutCert":    {[]string{"--tls-key", keyA}, "--tls-key needs --tls-cert"},
		"MissingCert":       {[]string{"--tls-cert", filepath.Join(dir, "none.pem"), "--tls-key", keyA}, "no such file"},
		"MismatchedPair":    {[]string{"--tls-cert", certA, "--tls-key", keyB}, "does not match"},
		"ACMEAndCert":       {[]string{"--acme-domain", "chat.example.com", "--tls-cert", certA, "--tls-key", keyA}, "give one"},
		"ACMEIP":            {[]string{"--acme-domain", "192.0.2.1"}, "IP address"},
		"ACMEURL":           {[]string{"--acme-domain", "https://chat.example.com"}, "bare domain"},
		"ACMEWildcard":      {[]string{"--acme-domain", "*.example.com"}, "bare domain"},
		"ACMEEmailNoDomain": {[]string{"--acme-email", "ops@example.com"}, "--acme-email needs --acme-domain"},
	} {
		t.Run(name, func(t *testing.T) {
			err := NewMain(&bytes.Buffer{}).ParseFlags(tc.args, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%v: %v (want one line saying %q)", tc.args, err, tc.says)
			}
		})
	}
	// The environment: the same checks.
	err := NewMain(&bytes.Buffer{}).ParseFlags(nil, func(k string) string {
		return map[string]string{"CHATSERVER_TLS_CERT": certA, "CHATSERVER_ACME_DOMAIN": "chat.example.com"}[k]
	})
	if err == nil {
		t.Fatal("CHATSERVER_ACME_DOMAIN with CHATSERVER_TLS_CERT accepted")
	}
}
