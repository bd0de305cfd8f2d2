package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/tui"
)

// The inbox comes from the cache before anything goes to the network: the
// session is opened, not connected, until the inbox is in the model
// (tui.Options.AfterInbox), and connects then. The server here is a
// listener that only counts connections.
func TestTUIConnectsAfterTheInbox(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open unanswered until the test ends
			accepted <- struct{}{}
		}
	}()

	home := t.TempDir()
	seedCache(t, home, "http://"+ln.Addr().String(), "alice", 5, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := newTUIBackend(ctx, client.Config{Home: home}, slog.New(slog.DiscardHandler))
	if err := be.open(ctx); err != nil {
		t.Fatal(err)
	}
	defer be.Close()

	connectedEarly := make(chan bool, 1)
	r := startTUIWith(t, be, 80, 24, func(o *tui.Options) {
		o.AfterInbox = func() tea.Msg {
			select {
			case <-accepted:
				connectedEarly <- true
			default:
				connectedEarly <- false
			}
			be.connect()
			return nil
		}
	})
	r.waitFor("peer4")
	select {
	case early := <-connectedEarly:
		if early {
			t.Fatal("the session connected before the inbox was read from the cache")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AfterInbox did not run once the inbox was loaded")
	}
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not connect after the inbox")
	}
}

// Inside tmux, colour detection runs `tmux info`: not before the first
// frame, only later, and a profile it raises reaches the renderer as a
// tea.ColorProfileMsg. The tmux here is a script on PATH that notes each run.
func TestColorProfileAsksTmuxOnlyLater(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := "#!/bin/sh\necho run >> '" + ran + "'\necho '  Tc: (flag) true'\n"
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	inTmux := []string{"TERM=xterm-256color", "TMUX=/tmp/tmux-1000/default,1,0", "TTY_FORCE=1"}

	start := startColorProfile(io.Discard, inTmux)
	if start != colorprofile.ANSI256 {
		t.Fatalf("start profile in tmux = %v, want %v (from TERM)", start, colorprofile.ANSI256)
	}
	// Bubble Tea creates its renderer from the environment it is given, and
	// ultraviolet's renderer detects the colour profile on its own.
	uv.NewTerminalRenderer(io.Discard, startEnviron(inTmux))
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("tmux info ran before the first frame")
	}
	msg := laterColorProfile(io.Discard, inTmux, start)
	if want := (tea.ColorProfileMsg{Profile: colorprofile.TrueColor}); msg != want {
		t.Fatalf("later profile = %#v, want %#v (tmux passes true colour)", msg, want)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("tmux info did not run later: %v", err)
	}

	outside := []string{"TERM=xterm-256color", "TTY_FORCE=1"}
	start = startColorProfile(io.Discard, outside)
	if msg := laterColorProfile(io.Discard, outside, start); msg != nil {
		t.Fatalf("outside tmux the later profile changed: %#v (start %v)", msg, start)
	}
}
