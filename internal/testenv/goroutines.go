package testenv

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// NoGoroutinesIn fails the test unless, within the given time, no goroutine
// but the caller's runs code of a package whose import path starts with one
// of prefixes: what an owner started must have ended once it says it has
// stopped. (goleak's idea, narrowed to this repository's packages, so the
// standard library's idle connection keepers and the test runner do not
// count.) The failure lists the stacks left.
func NoGoroutinesIn(tb testing.TB, within time.Duration, prefixes ...string) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		left := goroutinesIn(prefixes)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d goroutines still running code of %v after %s:\n\n%s", len(left), prefixes, within, strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutinesIn returns the stacks of the other goroutines that have a frame
// in one of the packages.
func goroutinesIn(prefixes []string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var left []string
	stacks := bytes.Split(buf, []byte("\n\n"))
	for i, st := range stacks {
		if i == 0 {
			continue // the caller's own goroutine comes first
		}
		s := string(st)
		for _, p := range prefixes {
			if strings.Contains(s, "\n"+p) && !strings.Contains(s, "internal/testenv.") {
				left = append(left, s)
				break
			}
		}
	}
	return left
}
