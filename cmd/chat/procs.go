package main

import (
	"runtime"
	"strings"
)

// The TUI runs on one processor once its first inbox is painted. What it does
// then is a chain of small hand-offs (the WebSocket read, the session's batch,
// the event pump, Update, View, the renderer's tick), each waking the next on
// whichever processor is idle; on two processors nearly every hand-off woke a
// sleeping thread, and a steady stream cost 10–13 wake-ups a message. On one,
// the chain runs on a thread that is already awake. The cache's SQLite calls
// still run beside it: a goroutine in a cgo call gives its processor up to the
// others. Before the paint both processors are kept, for the start's parallel
// work (the width table, the cache's open). `chat tail` is the same chain
// (read, commit, event, print) and runs on one from its start. docs/tui.md
// gives the figures.

// oneProcessor sets GOMAXPROCS to 1 unless the user's environment chose a
// value, and says whether it did.
func oneProcessor(environ []string) bool {
	for _, e := range environ {
		if strings.HasPrefix(e, "GOMAXPROCS=") {
			return false
		}
	}
	runtime.GOMAXPROCS(1)
	return true
}
