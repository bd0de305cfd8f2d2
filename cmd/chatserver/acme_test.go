package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/chatterm/chat/internal/testcert"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
)

// The ACME wiring, without the CA (nothing here reaches the network): the
// manager caches in <data-dir>/acme and takes only the named domains; on
// --addr it serves the certificate cached for a name and refuses other
// names; on --acme-http-addr the challenge path reaches the manager and
// everything else is redirected to https.
func TestACMEWiring(t *testing.T) {
	data := t.TempDir()
	cache := filepath.Join(data, "acme")
	// What autocert leaves in its cache: a certificate (key, then chain) under
	// the domain's name, and an http-01 token while a challenge is open.
	cached := testcert.SelfSigned(t, "chat.example.test")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"chat.example.test": append(append([]byte{}, cached.KeyPEM...), cached.CertPEM...),
		"tok123+http-01":    []byte("tok123.thumbprint"),
	} {
		if err := os.WriteFile(filepath.Join(cache, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var logs testenv.LogBuffer
	m := NewMain(&logs)
	err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", data, "--acme-domain", "Chat.Example.Test,other.example.test",
		"--acme-domain", "third.example.test.", "--acme-email", "ops@example.test", "--acme-http-addr", "127.0.0.1:0",
		"--public-url", "https://chat.example.test:8443"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"chat.example.test", "other.example.test", "third.example.test"}; !slices.Equal(m.tls.acme.domains, want) {
		t.Fatalf("domains %q, want %q", m.tls.acme.domains, want)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	mgr := m.tls.acme.manager
	if mgr.Cache != autocert.DirCache(cache) || mgr.Email != "ops@example.test" {
		t.Fatalf("manager cache %v, email %q", mgr.Cache, mgr.Email)
	}
	ctx := context.Background()
	for _, d := range []string{"chat.example.test", "other.example.test", "third.example.test"} {
		if err := mgr.HostPolicy(ctx, d); err != nil {
			t.Fatalf("host policy refuses %s: %v", d, err)
		}
	}
	if err := mgr.HostPolicy(ctx, "evil.example.test"); err == nil {
		t.Fatal("host policy takes a name not configured")
	}

	// HTTPS on --addr.
	pool := x509.NewCertPool()
	pool.AddCert(cached.Cert)
	conn, err := tls.Dial("tcp", m.Addr(), &tls.Config{ServerName: "chat.example.test", RootCAs: pool})
	if err != nil {
		t.Fatalf("handshake for the cached name: %v", err)
	}
	if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(cached.Cert.SerialNumber) != 0 {
		t.Fatalf("served serial %v, not the cached %v", got, cached.Cert.SerialNumber)
	}
	conn.Close()
	if conn, err := tls.Dial("tcp", m.Addr(), &tls.Config{ServerName: "evil.example.test", InsecureSkipVerify: true}); err == nil {
		conn.Close()
		t.Fatal("a certificate was served for a name not configured")
	}

	// Plain HTTP on --acme-http-addr.
	base := "http://" + m.tls.acme.ln.Addr().String()
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	do := func(method, host, path string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(""))
		req.Host = host
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), string(body)
	}
	if code, loc, _ := do("GET", "chat.example.test", "/v1/inbox?limit=5"); code != http.StatusMovedPermanently || loc != "https://chat.example.test:8443/v1/inbox?limit=5" {
		t.Fatalf("GET redirect: %d %q", code, loc)
	}
	if code, loc, _ := do("POST", "chat.example.test:80", "/v1/login"); code != http.StatusPermanentRedirect || loc != "https://chat.example.test:8443/v1/login" {
		t.Fatalf("POST redirect: %d %q", code, loc)
	}
	if code, _, body := do("GET", "chat.example.test", "/.well-known/acme-challenge/tok123"); code != 200 || body != "tok123.thumbprint" {
		t.Fatalf("challenge: %d %q", code, body)
	}
	if code, _, _ := do("GET", "evil.example.test", "/.well-known/acme-challenge/tok123"); code != http.StatusForbidden {
		t.Fatalf("challenge for a name not configured: %d", code)
	}
	if !strings.Contains(logs.String(), `url=https://127.0.0.1:`) || !strings.Contains(logs.String(), "answering ACME http-01 challenges") {
		t.Fatalf("start log:\n%s", logs.String())
	}
}

// Without --public-url the URL clients and media links use is the first
// domain's, on --addr's port unless that is 443; redirects follow it.
func TestACMEPublicURL(t *testing.T) {
	for addr, want := range map[string]string{
		":443":         "https://chat.example.test",
		"0.0.0.0:8443": "https://chat.example.test:8443",
		"127.0.0.1:0":  "https://chat.example.test",
		"[::1]:8443":   "https://chat.example.test:8443",
	} {
		a := acmeSetup{domains: []string{"chat.example.test"}}
		cfg := node.Config{Addr: addr, DataDir: t.TempDir()}
		if err := a.start(&cfg, nil); err != nil {
			t.Fatal(err)
		}
		if cfg.PublicURL != want || cfg.TLS == nil {
			t.Fatalf("--addr %s: public URL %q, want %q (TLS %v)", addr, cfg.PublicURL, want, cfg.TLS != nil)
		}
		a.close()
	}
	for _, tc := range []struct{ public, listen, want string }{
		{"https://chat.example.test", "0.0.0.0:8443", ""},
		{"https://chat.example.test:9443", "0.0.0.0:8443", "9443"},
		{"http://chat.example.test", "0.0.0.0:8443", "8443"},
		{"", "[::]:443", ""},
	} {
		if got := httpsPort(tc.public, tc.listen); got != tc.want {
			t.Fatalf("httpsPort(%q, %q) = %q, want %q", tc.public, tc.listen, got, tc.want)
		}
	}
}
