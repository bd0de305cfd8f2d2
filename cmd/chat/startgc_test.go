package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/chatterm/chat/client"
)

// gcPercent reads GOGC as the runtime has it now.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// The collector is off from the start until the first inbox is on the
// screen, then back at GOGC as it was: afterInbox (the command the TUI runs
// after its first inbox) releases it.
func TestGCHeldUntilAfterTheFirstInbox(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	release := holdGC()
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC while held = %d, want off (-1)", p)
	}
	be := newTUIBackend(t.Context(), client.Config{Home: t.TempDir()}, slog.New(slog.DiscardHandler)) // no session: connect does nothing
	defer be.Close()
	afterInbox(be, nil, release, io.Discard, nil, 0)()
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC after the first inbox = %d, want 150 as it was", p)
	}
	release() // again: a no-op
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC after a second release = %d, want 150", p)
	}
}
