package client_test

import (
	"context"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testcert"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// httpsServer is a server on HTTPS whose certificate a private CA signed;
// it returns the server and the CA file.
func httpsServer(t *testing.T) (*servertest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca.Leaf(t, "127.0.0.1").WriteFiles(t, cert, key)
	cf, err := node.LoadCertFile(cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.TLS = cf.TLSConfig() }))
	if !strings.HasPrefix(srv.URL, "https://") {
		t.Fatalf("URL %q", srv.URL)
	}
	return srv, ca.WriteFile(t, dir)
}

// tlsConfig is the client configuration the environment gives, with its
// HTTP client built; its idle connections close before the server stops.
func tlsConfig(t *testing.T, env map[string]string) client.Config {
	t.Helper()
	cfg, err := client.ConfigFromEnv(func(k string) string { return env[k] }).WithTLS()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTPClient == nil {
		t.Fatalf("no HTTP client built from %v", env)
	}
	t.Cleanup(cfg.HTTPClient.CloseIdleConnections)
	return cfg
}

// With the CA file (CHAT_CA_FILE) the client talks to a server on a private
// CA's certificate: register over HTTPS, sessions over WSS, a message sent
// each way arrives.
func TestHTTPSWithCAFile(t *testing.T) {
	srv, caFile := httpsServer(t)
	cfg := tlsConfig(t, map[string]string{"CHAT_CA_FILE": caFile})
	if cfg.CAFile != caFile || cfg.Insecure {
		t.Fatalf("ConfigFromEnv: %+v", cfg)
	}
	ctx, cancel := context.WithTimeout(bg, 15*time.Second)
	defer cancel()
	apis := map[string]*client.API{}
	for _, u := range []string{"alice", "bob"} {
		resp, err := client.NewAPI(srv.URL, "", cfg.HTTPClient).Register(ctx, wire.RegisterRequest{UserID: u, Password: password})
		if err != nil {
			t.Fatalf("register %s over https: %v", u, err)
		}
		apis[u] = client.NewAPI(srv.URL, resp.Token, cfg.HTTPClient)
	}
	useAPI := func(api *client.API) func(*client.SessionConfig) {
		return func(c *client.SessionConfig) { c.API = api }
	}
	alice := startDevice(t, apis["alice"], srv.URL, "alice", useAPI(apis["alice"]))
	bob := startDevice(t, apis["bob"], srv.URL, "bob", useAPI(apis["bob"]))
	alice.waitFor("alice connected over wss", func() bool { return alice.sess.State().Status == client.Connected })
	bob.waitFor("bob connected over wss", func() bool { return bob.sess.State().Status == client.Connected })
	conv := direct(t, apis["alice"], "bob")

	if _, err := apis["alice"].SendNow(ctx, conv, wire.SendRequest{MessageID: wire.NewMessageID(), Content: "over https"}); err != nil {
		t.Fatalf("send over https: %v", err)
	}
	if _, err := alice.sess.Send(ctx, conv, "over wss"); err != nil {
		t.Fatalf("send over wss: %v", err)
	}
	bob.waitFor("both messages at bob", func() bool { return len(bob.messageEvents()) == 2 })
	got := []string{bob.messageEvents()[0].Content, bob.messageEvents()[1].Content}
	if got[0] != "over https" || got[1] != "over wss" {
		t.Fatalf("bob got %q", got)
	}
}

// Without the CA file the certificate is refused, on the API and on the
// WebSocket; with CHAT_INSECURE=1 it is not checked at all.
func TestHTTPSVerification(t *testing.T) {
	srv, _ := httpsServer(t)
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	unknownCA := func(err error) bool {
		var ua x509.UnknownAuthorityError
		return errors.As(err, &ua)
	}
	err := client.NewAPI(srv.URL, "", nil).Health(ctx)
	if !unknownCA(err) || !client.IsNetError(err) {
		t.Fatalf("API without the CA file: %v", err)
	}
	if _, err := client.Dial(ctx, srv.URL, "token", nil); !unknownCA(err) {
		t.Fatalf("WebSocket without the CA file: %v", err)
	}
	// Another CA's file does not help.
	other := testcert.NewCA(t).WriteFile(t, t.TempDir())
	if err := client.NewAPI(srv.URL, "", tlsConfig(t, map[string]string{"CHAT_CA_FILE": other}).HTTPClient).Health(ctx); !unknownCA(err) {
		t.Fatalf("API with another CA's file: %v", err)
	}

	for _, v := range []string{"0", "false", "no"} {
		if cfg := client.ConfigFromEnv(func(k string) string { return map[string]string{"CHAT_INSECURE": v}[k] }); cfg.Insecure {
			t.Fatalf("CHAT_INSECURE=%s turned verification off", v)
		}
	}
	insecure := tlsConfig(t, map[string]string{"CHAT_INSECURE": "1"})
	if err := client.NewAPI(srv.URL, "", insecure.HTTPClient).Health(ctx); err != nil {
		t.Fatalf("API with CHAT_INSECURE=1: %v", err)
	}
	resp, err := client.NewAPI(srv.URL, "", insecure.HTTPClient).Register(ctx, wire.RegisterRequest{UserID: "carol", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := client.Dial(ctx, srv.URL, resp.Token, insecure.HTTPClient)
	if err != nil {
		t.Fatalf("WebSocket with CHAT_INSECURE=1: %v", err)
	}
	conn.Close()
}

func TestWithTLSRefusesBadCAFile(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(dir, "missing.pem"), junk} {
		if _, err := (client.Config{CAFile: file}).WithTLS(); err == nil || !strings.Contains(err.Error(), file) {
			t.Fatalf("CA file %s: %v", file, err)
		}
	}
	// Nothing asked, nothing built: the default client stays.
	if cfg, err := (client.Config{}).WithTLS(); err != nil || cfg.HTTPClient != nil {
		t.Fatalf("empty config: %v %v", cfg.HTTPClient, err)
	}
}
