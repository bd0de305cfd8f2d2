//go:build !linux

package faulttest

import "testing"

// NewCounter skips the test: page faults are counted only on Linux.
func NewCounter(t testing.TB) *Counter {
	t.Helper()
	t.Skip("page faults are counted only on Linux (perf_event_open)")
	return nil
}

// Faults is never reached: NewCounter skipped the test.
func (c *Counter) Faults(t testing.TB) int { return 0 }
