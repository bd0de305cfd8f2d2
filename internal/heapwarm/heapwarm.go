// Package heapwarm asks for the Go heap's next pages in one call, from the
// package initialisers on when the process is the chat TUI.
//
// The TUI writes about 4 MB of fresh heap before its first frame (Bubble
// Tea's and ultraviolet's screen buffers and key table, the package
// initialisers' maps, goroutine stacks, the cache's first reads): about
// 1,100 page faults, each a trap that costs 15–150 µs on a virtual machine
// (docs/tui.md "Time to a painted inbox"). internal/prefault's HeapAhead
// makes those pages present in one system call, as far as the runtime has
// mapped its heap, on a goroutine of its own while the initialisers go on.
// The commands (chat send, chat history, ...) allocate little before their
// work and are left alone, except chat tail, which calls Start as it
// connects: its first burst grows the heap for the first time.
//
// This package imports only internal/prefault and internal/early (which
// keep to the standard library) and the standard library, so it is
// initialised early: the heap it populates is the heap the rest of the
// initialisers and main grow into.
package heapwarm

import (
	"os"

	"github.com/chatterm/chat/internal/early"
	"github.com/chatterm/chat/internal/prefault"
)

// ahead is how much of the heap past its newest allocation is asked for:
// what the start writes before its first frame (GODEBUG=gctrace=1 and the
// collector held: about 4 MB).
const ahead = 4 << 20

var job = early.NewJob(func() { _ = prefault.HeapAhead(ahead) })

func init() {
	if early.ForTUI(os.Args) {
		Start()
	}
}

// Start populates the heap ahead on a goroutine of its own, the first time
// it is called; later calls do nothing. Where the system cannot populate,
// the pages fault in as before.
func Start() { job.Start() }

// Done is closed once the heap has been populated (or could not be).
func Done() <-chan struct{} { return job.Done() }
