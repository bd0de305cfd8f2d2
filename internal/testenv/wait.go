package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test if it does not within
// the given time: for what a test cannot wait on directly (a goroutine parking,
// a background write landing).
func WaitFor(tb testing.TB, within time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met in %v", within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
