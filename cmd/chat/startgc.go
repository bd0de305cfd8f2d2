package main

import (
	"runtime/debug"
	"sync"
	"time"
)

// The start allocates a few MB in its first tens of ms (the cache's open,
// Bubble Tea's screen buffers, the first frame's strings, go-runewidth's
// width table), past the Go runtime's first heap goal of 4 MB: one
// collection ran in the middle of it, 10 ms of the wall clock and 11 ms of
// CPU with a mark worker taking one of the two cores the paint needs
// (GODEBUG=gctrace=1 on a start in tmux). It can wait until the inbox is on
// the screen.

// gcHoldLimit bounds the hold when no inbox comes to end it (the first-run
// screen, a cache that cannot be read).
const gcHoldLimit = 2 * time.Second

// holdGC turns the collector off and returns what turns it back on (to
// GOGC as it was), which is safe to call more than once; it runs by itself
// after gcHoldLimit.
func holdGC() (release func()) {
	prev := debug.SetGCPercent(-1)
	release = sync.OnceFunc(func() { debug.SetGCPercent(prev) })
	time.AfterFunc(gcHoldLimit, release)
	return release
}
