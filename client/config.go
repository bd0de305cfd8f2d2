package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/wire"
)

// Config says which server to talk to, where to keep the account's files, and
// which token to present. The CLI fills it from flags, then the environment.
type Config struct {
	// Server is the server's base URL, e.g. "https://chat.example.com"
	// (--server, CHAT_SERVER). Empty: the server of the last login.
	Server string
	// Home holds the stored logins and the caches (--home, CHAT_HOME).
	// Empty: os.UserConfigDir()/chat.
	Home string
	// Token, when set, is presented instead of the stored one (CHAT_TOKEN), for
	// scripts and CI that never log in interactively.
	Token string
	// Logger receives the client's diagnostics. Nil: discarded.
	Logger *slog.Logger
	// HTTPClient makes the API requests and WebSocket dials. Nil: a client
	// with dial and TLS timeouts (WithTLS makes one from CAFile and Insecure).
	HTTPClient *http.Client
	// CAFile is a PEM file of CA certificates trusted besides the system's,
	// for a server whose certificate a private CA signed (--ca-file,
	// CHAT_CA_FILE). Insecure skips verifying the server's certificate
	// altogether (--insecure, CHAT_INSECURE=1). Both take effect through
	// WithTLS, which builds HTTPClient from them.
	CAFile   string
	Insecure bool
	// Events, when set, is where sessions Open makes report
	// (SessionConfig.Events). Nil: each has a channel of its own.
	Events chan Event
	// MessageBatches: the sessions Open makes report each receive commit's
	// messages in one MessagesEvent (SessionConfig.MessageBatches).
	MessageBatches bool
	// StreamPauses: the sessions Open makes report a stream's pauses
	// (SessionConfig.StreamPauses).
	StreamPauses bool
}

// ConfigFromEnv reads CHAT_SERVER, CHAT_HOME, CHAT_TOKEN, CHAT_CA_FILE and
// CHAT_INSECURE through getenv (os.Getenv in a program, a map in a test).
// CHAT_INSECURE counts only when it says true (1, true): verification is
// skipped only when asked for.
func ConfigFromEnv(getenv func(string) string) Config {
	insecure, _ := strconv.ParseBool(getenv("CHAT_INSECURE"))
	return Config{
		Server:   getenv("CHAT_SERVER"),
		Home:     getenv("CHAT_HOME"),
		Token:    getenv("CHAT_TOKEN"),
		CAFile:   getenv("CHAT_CA_FILE"),
		Insecure: insecure,
	}
}

// ErrNotLoggedIn means there is no stored login (and no CHAT_TOKEN) for the
// server, or the server refused the token.
var ErrNotLoggedIn = errors.New("not logged in")

// ErrNoServer means no server was named and none was logged in to before.
var ErrNoServer = errors.New("no server given: pass --server URL or set CHAT_SERVER")

// Account is a stored login: the file <home>/<server dir>/account.json, mode 0600.
type Account struct {
	Server    string    `json:"server"`
	UserID    string    `json:"user_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// homeConfig is <home>/config.json: what to use when no flag or variable says.
type homeConfig struct {
	Server string `json:"server"`
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// HomeDir returns the configured home, or the default one.
func (c Config) HomeDir() (string, error) {
	if c.Home != "" {
		return c.Home, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for chat: set CHAT_HOME or pass --home (%w)", err)
	}
	return filepath.Join(dir, "chat"), nil
}

// NormalizeServer turns what a user types into a base URL: a missing scheme is
// http for loopback hosts and https otherwise; a trailing slash is dropped.
func NormalizeServer(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", ErrNoServer
	}
	if !strings.Contains(raw, "://") {
		host := raw
		if i := strings.IndexAny(host, "/"); i >= 0 {
			host = host[:i]
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "localhost" || net.ParseIP(strings.Trim(host, "[]")).IsLoopback() {
			raw = "http://" + raw
		} else {
			raw = "https://" + raw
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("server %q is not an http:// or https:// URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("server %q: give only scheme, host, port and path", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// serverDir names a server's directory in the home: its host and port, with
// characters that some file systems refuse replaced.
func serverDir(server string) string {
	u, err := url.Parse(server)
	name := server
	if err == nil {
		name = u.Host + u.Path
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, name)
}

// ResolveServer returns the server to use: Config.Server, else the one of the
// last login in the home.
func (c Config) ResolveServer() (string, error) {
	if c.Server != "" {
		return NormalizeServer(c.Server)
	}
	home, err := c.HomeDir()
	if err != nil {
		return "", err
	}
	var hc homeConfig
	b, err := os.ReadFile(filepath.Join(home, "config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoServer
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Join(home, "config.json"), err)
	}
	if err := json.Unmarshal(b, &hc); err != nil || hc.Server == "" {
		return "", fmt.Errorf("%s is damaged: log in again with --server (%v)", filepath.Join(home, "config.json"), err)
	}
	return NormalizeServer(hc.Server)
}

// LoadAccount returns the login to use for the resolved server. CHAT_TOKEN
// (Config.Token) wins over the stored token; the user id is then known only if
// the stored login has the same token, else it is empty and the caller asks
// the server (API.Me). With neither, the error is ErrNotLoggedIn.
func (c Config) LoadAccount() (Account, error) {
	server, err := c.ResolveServer()
	if err != nil {
		return Account{}, err
	}
	home, err := c.HomeDir()
	if err != nil {
		return Account{}, err
	}
	stored, err := readAccount(home, server)
	if err != nil && !errors.Is(err, ErrNotLoggedIn) {
		return Account{}, err
	}
	if c.Token != "" {
		a := Account{Server: server, Token: c.Token}
		if stored.Token == c.Token {
			a.UserID, a.ExpiresAt = stored.UserID, stored.ExpiresAt
		}
		return a, nil
	}
	if err != nil {
		return Account{}, fmt.Errorf("%w to %s: run chat login USER (or set CHAT_TOKEN)", ErrNotLoggedIn, server)
	}
	return stored, nil
}

func accountPath(home, server string) string {
	return filepath.Join(home, serverDir(server), "account.json")
}

func readAccount(home, server string) (Account, error) {
	path := accountPath(home, server)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Account{}, ErrNotLoggedIn
	}
	if err != nil {
		return Account{}, fmt.Errorf("read login: %w", err)
	}
	var a Account
	if err := json.Unmarshal(b, &a); err != nil || a.Token == "" || a.UserID == "" {
		return Account{}, fmt.Errorf("login file %s is damaged: run chat login USER again", path)
	}
	a.Server = server
	return a, nil
}

// SaveAccount stores a login (mode 0600, written atomically) and makes its server
// the default for later commands.
func (c Config) SaveAccount(a Account) error {
	home, err := c.HomeDir()
	if err != nil {
		return err
	}
	server, err := NormalizeServer(a.Server)
	if err != nil {
		return err
	}
	a.Server = server
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(accountPath(home, server), b); err != nil {
		return fmt.Errorf("store login: %w", err)
	}
	hc, _ := json.Marshal(homeConfig{Server: server})
	if err := writeFileAtomic(filepath.Join(home, "config.json"), hc); err != nil {
		return fmt.Errorf("store default server: %w", err)
	}
	return nil
}

// RemoveAccount forgets the stored login for a server (logout). It is not an
// error if there was none.
func (c Config) RemoveAccount(server string) error {
	home, err := c.HomeDir()
	if err != nil {
		return err
	}
	if err := os.Remove(accountPath(home, server)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove login: %w", err)
	}
	return nil
}

// CachePath is where the cache of an account lives:
// <home>/<server dir>/<user_id>/cache.db.
func (c Config) CachePath(server, userID string) (string, error) {
	home, err := c.HomeDir()
	if err != nil {
		return "", err
	}
	if err := wire.ValidateUserID(userID); err != nil {
		return "", err
	}
	return filepath.Join(home, serverDir(server), userID, "cache.db"), nil
}

// writeFileAtomic writes through a temporary file and a rename, so a crash
// leaves the old file or the new one, never half of one. Mode 0600: the files
// hold tokens.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
