// Package widthwarm builds go-runewidth's width table on a goroutine of its
// own, from the package initialisers on when the process is the chat TUI.
//
// go-runewidth (v0.0.28) builds a 2 × 1.1 MB table on its first lookup of a
// rune past U+02FF, behind a sync.Once. The TUI's first frame needs it:
// the composer's prompt (›) is measured on the first window size, and the
// renderer measures every cell through x/ansi's WcWidth, ▌ and ─ among them.
// Writing the table is 550 first touches of a 4 KiB page: about 11 ms of
// CPU a start (CHAT_CPUPROFILE over 15 starts) and 40–120 ms of wall clock
// with the machine loaded (CHAT_STARTTRACE; docs/tui.md "Time to a painted
// inbox"). The goroutine asks for the table's pages in one call first
// (internal/prefault), so the build writes pages that are already there.
// Started from runTUI it was still being built when the first window size
// came, in three starts of five, and the first frame waited for it.
//
// Started here, it is built on the other core while the rest of the
// package initialisers run (about 10 ms) and main opens the cache, instead
// of from runTUI on. Only a process that will be the TUI starts it: chat
// with no arguments. The commands (chat send, chat tail, ...) would build it
// for nothing, and `chat --home DIR` (flags, no command) starts it from
// runTUI as before.
//
// This package imports only go-runewidth, internal/prefault, internal/early
// and the standard library (prefault and early keep to the standard
// library), so the Go specification's order of initialisation (each package
// as soon as its imports are, in the order of their paths) runs it as soon
// as go-runewidth is initialised.
package widthwarm

import (
	"os"

	"github.com/mattn/go-runewidth"

	"github.com/chatterm/chat/internal/early"
)

var job = early.NewJob(build)

func init() {
	if early.ForTUI(os.Args) {
		Start()
	}
}

// Start builds the table on a goroutine of its own, the first time it is
// called; later calls do nothing.
func Start() { job.Start() }

// build is the work Start starts. The table's pages are asked for first, in
// one call (internal/prefault), rather than taken one page fault at a time
// as the build writes them. Where they cannot be (not Linux, a kernel
// before 5.14) the build faults them in as before.
func build() {
	_ = populateTable()
	runewidth.RuneWidth('…') // U+2026: past U+02FF, so the whole table
}

// Built is closed once the table is built.
func Built() <-chan struct{} { return job.Done() }
