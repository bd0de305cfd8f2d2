package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
)

// The cache opens beside Bubble Tea's set-up: openAsync returns with the
// open still under way, Session already names the stored login (the first
// screen is the inbox, not the first-run one), and the inbox's read waits
// for the open and shows the cache's conversations.
func TestTUIOpensTheCacheBesideTheProgram(t *testing.T) {
	home := t.TempDir()
	seedCache(t, home, "http://127.0.0.1:9", "alice", 5, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := newTUIBackend(ctx, client.Config{Home: home}, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	be.openSession = func(ctx context.Context, cfg client.Config) (*client.Session, error) {
		<-release
		return client.Open(ctx, cfg)
	}
	defer be.Close()

	opened := make(chan error, 1)
	go func() { opened <- be.openAsync(ctx) }()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("openAsync waited for the cache's open")
	}
	if user, server := be.Session(); user != "alice" || server != "http://127.0.0.1:9" {
		t.Fatalf("Session() during the open = %q, %q; want alice's stored login", user, server)
	}

	r := startTUIWith(t, be, 80, 24, nil)
	time.Sleep(50 * time.Millisecond) // the inbox's read under way, held
	if s := r.screen(); strings.Contains(s, "peer4") || strings.Contains(strings.ToLower(s), "password") {
		t.Fatalf("before the cache is open the screen shows:\n%s\nwant the inbox, empty", s)
	}
	close(release)
	r.waitFor("peer4")
}

// An open that fails ends the program (quit) with its error, which the
// backend's reads return too.
func TestTUIOpenFailureQuits(t *testing.T) {
	home := t.TempDir()
	seedCache(t, home, "http://127.0.0.1:9", "alice", 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := newTUIBackend(ctx, client.Config{Home: home}, slog.New(slog.DiscardHandler))
	broken := errors.New("the cache is locked by another chat")
	be.openSession = func(context.Context, client.Config) (*client.Session, error) { return nil, broken }
	defer be.Close()
	if err := be.openAsync(ctx); err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	var marks []string
	quitOnOpenFailure(be, func() { close(quit) }, func(s string) { marks = append(marks, s) })
	select {
	case <-quit:
	default:
		t.Fatal("a failed open did not quit the program")
	}
	if err := be.waitOpen(); !errors.Is(err, broken) {
		t.Fatalf("waitOpen = %v, want the open's error", err)
	}
	if _, err := be.Inbox(ctx); !errors.Is(err, broken) {
		t.Fatalf("Inbox = %v, want the open's error", err)
	}
	if len(marks) != 1 || marks[0] != "session opened" {
		t.Fatalf("trace marks %q, want the open's end", marks)
	}
	// The model built after a fast failure must still be the stored login's
	// (the inbox, until the quit), never the first-run screen.
	if user, _ := be.Session(); user != "alice" {
		t.Fatalf("Session after a failed open = %q, want the stored login's alice (not the first-run screen)", user)
	}
}
