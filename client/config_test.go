package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func TestNormalizeServer(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for in, want := range map[string]string{
			"https://chat.example.com/":   "https://chat.example.com",
			"chat.example.com":            "https://chat.example.com",
			"chat.example.com:8443/chat/": "https://chat.example.com:8443/chat",
			"localhost:8080":              "http://localhost:8080",
			"127.0.0.1:8080":              "http://127.0.0.1:8080",
			"[::1]:8080":                  "http://[::1]:8080",
			" http://10.0.0.5:8080 ":      "http://10.0.0.5:8080",
		} {
			got, err := client.NormalizeServer(in)
			if err != nil || got != want {
				t.Errorf("NormalizeServer(%q) = %q, %v; want %q", in, got, err, want)
			}
		}
	})
	t.Run("ErrBad", func(t *testing.T) {
		for _, in := range []string{"", "ftp://x", "https://", "https://h?x=1", "https://user:pw@h"} {
			if got, err := client.NormalizeServer(in); err == nil {
				t.Errorf("NormalizeServer(%q) = %q, want an error", in, got)
			}
		}
	})
}

func TestAccountStorage(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		home := t.TempDir()
		cfg := client.Config{Home: home}
		acct := client.Account{Server: "127.0.0.1:9000", UserID: "alice", Token: "tok-1", ExpiresAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
		if err := cfg.SaveAccount(acct); err != nil {
			t.Fatal(err)
		}
		// No server named: the last login's server is the default.
		got, err := cfg.LoadAccount()
		if err != nil {
			t.Fatal(err)
		}
		if got.Server != "http://127.0.0.1:9000" || got.UserID != "alice" || got.Token != "tok-1" || !got.ExpiresAt.Equal(acct.ExpiresAt) {
			t.Fatalf("loaded %+v", got)
		}
		filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
			}
			return nil
		})
		path, err := cfg.CachePath(got.Server, "alice")
		if err != nil || path != filepath.Join(home, "127.0.0.1_9000", "alice", "cache.db") {
			t.Fatalf("cache path %q %v", path, err)
		}
	})
	t.Run("OKTokenOverrides", func(t *testing.T) {
		home := t.TempDir()
		if err := (client.Config{Home: home}).SaveAccount(client.Account{Server: "http://h:1", UserID: "alice", Token: "stored"}); err != nil {
			t.Fatal(err)
		}
		got, err := client.Config{Home: home, Token: "from-env"}.LoadAccount()
		if err != nil || got.Token != "from-env" || got.UserID != "" {
			t.Fatalf("with CHAT_TOKEN: %+v %v (the stored user id belongs to another token)", got, err)
		}
		got, err = client.Config{Home: home, Token: "stored"}.LoadAccount()
		if err != nil || got.UserID != "alice" {
			t.Fatalf("with the stored token: %+v %v", got, err)
		}
		// A token only without any stored login, for a named server.
		got, err = client.Config{Home: t.TempDir(), Server: "http://other:2", Token: "t"}.LoadAccount()
		if err != nil || got.Server != "http://other:2" || got.Token != "t" {
			t.Fatalf("token only: %+v %v", got, err)
		}
	})
	t.Run("ErrNotLoggedIn", func(t *testing.T) {
		home := t.TempDir()
		if _, err := (client.Config{Home: home}).LoadAccount(); !errors.Is(err, client.ErrNoServer) {
			t.Fatalf("empty home: %v, want ErrNoServer", err)
		}
		cfg := client.Config{Home: home}
		if err := cfg.SaveAccount(client.Account{Server: "http://h:1", UserID: "alice", Token: "t"}); err != nil {
			t.Fatal(err)
		}
		// Another server: its own login, which does not exist.
		_, err := client.Config{Home: home, Server: "http://h:2"}.LoadAccount()
		if !errors.Is(err, client.ErrNotLoggedIn) || !strings.Contains(err.Error(), "chat login") {
			t.Fatalf("other server: %v", err)
		}
		if err := cfg.RemoveAccount("http://h:1"); err != nil {
			t.Fatal(err)
		}
		if _, err := cfg.LoadAccount(); !errors.Is(err, client.ErrNotLoggedIn) {
			t.Fatalf("after logout: %v", err)
		}
	})
}

func TestAPIErrors(t *testing.T) {
	srv := servertest.Start(t)
	api := register(t, srv, "alice")
	t.Run("ErrFromServer", func(t *testing.T) {
		_, err := api.User(bg, "nobody")
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != wire.CodeNotFound || !strings.Contains(we.Message, "nobody") {
			t.Fatalf("err = %#v", err)
		}
		_, err = api.WithToken("bogus").Me(bg)
		if wire.ErrorCode(err) != wire.CodeUnauthorized {
			t.Fatalf("bogus token: %v", err)
		}
	})
	t.Run("ErrWithoutBody", func(t *testing.T) {
		// A proxy in front of the server answers without the JSON error body.
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}))
		defer proxy.Close()
		_, err := client.NewAPI(proxy.URL, "t", nil).Inbox(bg, 0)
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != wire.CodeRateLimited || we.RetryAfter() != 3*time.Second {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("OKHealth", func(t *testing.T) {
		if err := api.Health(bg); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrUnreachable", func(t *testing.T) {
		_, err := client.NewAPI("http://127.0.0.1:1", "t", nil).Me(bg)
		if !client.IsNetError(err) || !strings.Contains(err.Error(), "cannot reach") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestBackoff(t *testing.T) {
	b := client.Backoff{}
	// Ceilings double from 250ms up to the 30s cap, and stay there.
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for n, w := range want {
		if got := b.Ceiling(n); got != w {
			t.Errorf("Ceiling(%d) = %v, want %v", n, got, w)
		}
	}
	if got := b.Ceiling(200); got != 30*time.Second {
		t.Errorf("Ceiling(200) = %v: overflow", got)
	}
	// Full jitter: anywhere from 0 up to the ceiling.
	if got := b.Delay(3, func() float64 { return 0 }); got != 0 {
		t.Errorf("Delay with jitter 0 = %v", got)
	}
	if got := b.Delay(3, func() float64 { return 0.5 }); got != time.Second {
		t.Errorf("Delay with jitter 0.5 = %v, want 1s", got)
	}
	for range 1000 {
		if d := b.Delay(4, nil); d < 0 || d >= 4*time.Second {
			t.Fatalf("Delay(4) = %v, outside [0, 4s)", d)
		}
	}
}

func TestStateString(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		st   client.State
		want string
	}{
		{client.State{Status: client.Connected}, "connected"},
		{client.State{Status: client.Reconnecting, RetryAt: now.Add(3 * time.Second), Unsent: 2}, "reconnecting in 3s (2 unsent)"},
		{client.State{Status: client.Offline, Unsent: 1}, "offline (1 unsent)"},
		{client.State{Status: client.Offline, LoggedOut: true}, "logged out: log in again"},
	} {
		if got := c.st.At(now); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}

// The lifecycle a UI goes through: register (or log in), open the account's
// session and cache, log out.
func TestAccountLifecycle(t *testing.T) {
	srv := servertest.Start(t)
	cfg := client.Config{Home: t.TempDir(), HTTPClient: httpClient(t)}
	t.Run("OK", func(t *testing.T) {
		acct, err := client.Register(bg, cfg, srv.URL, wire.RegisterRequest{UserID: "alice", Password: password})
		if err != nil || acct.UserID != "alice" || acct.Token == "" {
			t.Fatalf("register: %+v %v", acct, err)
		}
		if _, err := client.Login(bg, cfg, "", "alice", password); err != nil {
			t.Fatalf("login to the default server: %v", err)
		}
		sess, err := client.Open(bg, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sess.UserID() != "alice" || sess.Store().UserID() != "alice" {
			t.Fatalf("session of %q", sess.UserID())
		}
		sess.Close()
		path, _ := cfg.CachePath(srv.URL, "alice")
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("cache not at %s: %v", path, err)
		}
		if err := client.Logout(bg, cfg); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Open(bg, cfg); !errors.Is(err, client.ErrNotLoggedIn) {
			t.Fatalf("open after logout: %v", err)
		}
	})
	t.Run("ErrWrongPassword", func(t *testing.T) {
		_, err := client.Login(bg, cfg, srv.URL, "alice", "not the password")
		if wire.ErrorCode(err) != wire.CodeUnauthorized {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrTokenOfNobody", func(t *testing.T) {
		c := cfg
		c.Server, c.Token = srv.URL, "bogus"
		if _, err := client.Open(bg, c); !errors.Is(err, client.ErrNotLoggedIn) {
			t.Fatalf("open with a bogus CHAT_TOKEN: %v", err)
		}
	})
}
