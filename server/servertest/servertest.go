// Package servertest starts an in-process chatserver for tests: embedded backend
// in a temporary directory, on a free loopback port, open registration.
//
// With CHATSERVER_TEST_BACKEND=production the same servers run on the production
// backends (DynamoDB, Redis, S3) against the test services named by the
// CHAT_TEST_* variables, with a unique table and key prefix per server, so every
// end-to-end test runs unchanged on both.
package servertest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"time"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/sqlite"
)

// Server is a running in-process chatserver.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	Node *node.Node
	cfg  node.Config
}

// Option adjusts the node configuration before start.
type Option func(*node.Config)

// WithConfig lets a test change any node setting.
func WithConfig(f func(*node.Config)) Option { return Option(f) }

// MetricsToken is what the servers' /metrics need (Authorization: Bearer).
const MetricsToken = "servertest-metrics"

// Start starts a server and stops it when the test ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	cfg := node.Config{
		Addr:         "127.0.0.1:0",
		DataDir:      filepath.Join(tb.TempDir(), "data"),
		Registration: "open",
		PasswordCost: 4, // bcrypt's minimum: tests register many users
		SendRate:     -1,
		AuthRate:     -1, // every test user registers from 127.0.0.1
		// and connects from there: the per-address socket cap is tested on its own.
		SocketsPerAddr: -1,
		ConnsPerAddr:   -1,
		MetricsToken:   MetricsToken,
		NoSync:         true, // durability across a process restart does not need fsync
		// Short, so push and redelivery tests take seconds; long enough that test
		// clients which do not ack see no second copy within their own waits.
		RedeliverAfter: time.Second,
		Logger:         testLogger(tb),
	}
	if os.Getenv("CHATSERVER_TEST_BACKEND") == "production" {
		cfg.Production = productionConfig(tb)
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{cfg: cfg}
	s.start(tb)
	tb.Cleanup(func() { s.Close() })
	return s
}

func (s *Server) start(tb testing.TB) {
	tb.Helper()
	n, err := node.Start(context.Background(), s.cfg)
	if err != nil {
		tb.Fatalf("start server: %v", err)
	}
	s.Node = n
	s.URL = n.URL()
	// A restart comes back on the same port, so clients reconnect to the same URL.
	s.cfg.Addr = n.Addr()
}

// Close stops the server (idempotent).
func (s *Server) Close() {
	if s.Node != nil {
		s.Node.Close()
		s.Node = nil
	}
}

// Restart stops the server and starts it again on the same data and port: what a
// process restart does.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Close()
	s.start(tb)
}

// Backup snapshots the embedded store while the server runs, as chatserver
// backup does, and returns the file for Restore. The production backend has
// no such step (its tables are restored by AWS): the test is skipped there.
func (s *Server) Backup(tb testing.TB) string {
	tb.Helper()
	s.NeedsEmbedded(tb)
	dst := filepath.Join(tb.TempDir(), "backup.db")
	if err := sqlite.Snapshot(context.Background(), filepath.Join(s.cfg.DataDir, "chat.db"), dst); err != nil {
		tb.Fatalf("back up: %v", err)
	}
	return dst
}

// NeedsEmbedded skips the test on the production backend: for tests of
// chatserver backup and restore, which are the embedded backend's (DynamoDB
// tables are restored by AWS).
func (s *Server) NeedsEmbedded(tb testing.TB) {
	tb.Helper()
	if s.cfg.Production.Enabled() {
		tb.Skip("backup and restore are the embedded backend's")
	}
}

// Restore stops the server, puts a Backup in place of its database with a
// new store id (what chatserver restore does) and starts it again on the
// same port.
func (s *Server) Restore(tb testing.TB, backup string) {
	tb.Helper()
	s.putBack(tb, backup, true)
}

// RollBack is Restore without the new store id: the database file copied
// back by hand, the way clients cannot tell from the hello.
func (s *Server) RollBack(tb testing.TB, backup string) {
	tb.Helper()
	s.putBack(tb, backup, false)
}

func (s *Server) putBack(tb testing.TB, backup string, newID bool) {
	tb.Helper()
	s.Close()
	db := filepath.Join(s.cfg.DataDir, "chat.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !os.IsNotExist(err) {
			tb.Fatal(err)
		}
	}
	data, err := os.ReadFile(backup)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if newID {
		if _, err := sqlite.RotateStoreIDAt(context.Background(), db); err != nil {
			tb.Fatalf("restore: %v", err)
		}
	}
	s.start(tb)
}

// Config is the node configuration the server runs with.
func (s *Server) Config() node.Config { return s.cfg }

func testLogger(tb testing.TB) *slog.Logger {
	if os.Getenv("CHATSERVER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
