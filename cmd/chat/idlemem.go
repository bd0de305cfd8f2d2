package main

import (
	"runtime/debug"
	"runtime/metrics"
)

// After a large load (a 50,000-message history paged in with g, a burst)
// the heap holds tens of MB that are free but not yet returned to the
// system. Go's background scavenger returns them a little at a time, at up
// to 1% of a CPU, for as long as that takes: most of what the idle TUI
// cost in the first tens of seconds after such a load (docs/tui.md,
// "Performance, measured from outside": 0.13–0.69% of a core in the first
// 10 s, 0.05–0.09% from 30 s on). Returned at once when the TUI goes
// idle, the same work is done in one go and the idle is idle.

// idleReleaseMin is how much free, unreturned heap is worth a forced
// collection and a return of it at once: below it the background scavenger
// has little to do.
const idleReleaseMin = 16 << 20

const heapFreeMetric = "/memory/classes/heap/free:bytes"

// heapFree is the heap's memory that is free and could be returned to the
// system but has not been.
func heapFree() uint64 {
	s := []metrics.Sample{{Name: heapFreeMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// releaseIdleMemory returns the heap's free memory to the system if there is
// at least idleReleaseMin of it, and says whether it did. The TUI runs it
// when its frame pacer goes to sleep (tui.FramePacer.OnSleep).
func releaseIdleMemory() bool {
	if heapFree() < idleReleaseMin {
		return false
	}
	debug.FreeOSMemory()
	return true
}
