package main

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

var sink [][]byte

func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// After a load leaves tens of MB free in the heap, releaseIdleMemory returns
// them to the system at once; with little free it does nothing, not even a
// collection.
func TestReleaseIdleMemoryReturnsWhatALoadLeft(t *testing.T) {
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil
	runtime.GC() // the 64 MB are free now, and mostly still held
	if free := heapFree(); free < idleReleaseMin {
		t.Fatalf("after freeing 64 MB only %d bytes free: the test cannot see a release", free)
	}
	if !releaseIdleMemory() {
		t.Fatal("releaseIdleMemory did nothing with 64 MB free")
	}
	if free := heapFree(); free >= idleReleaseMin {
		t.Fatalf("%d bytes still free and held after releaseIdleMemory", free)
	}

	before := forcedGCs()
	if releaseIdleMemory() {
		t.Fatalf("releaseIdleMemory ran again with %d bytes free", heapFree())
	}
	if n := forcedGCs() - before; n != 0 {
		t.Fatalf("%d collections forced with little free", n)
	}
}
