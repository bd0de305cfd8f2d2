// Package roletest is the conformance suite of the role interfaces in
// server/roles.go. Every implementation runs it from its own tests with a factory:
//
//	func TestSequencer(t *testing.T) {
//		roletest.Sequencer(t, func(t *testing.T) server.Sequencer { return inmem.NewSequencer() })
//	}
//
// Each subtest calls the factory once and uses ids with a prefix of its own, so
// implementations backed by a shared service (Redis, S3) need no cleanup between
// tests.
package roletest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// id returns an id unique to this test run, readable in a failure message.
func id(t *testing.T, name string) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	base := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return base + "-" + hex.EncodeToString(b[:]) + "-" + name
}

// ctx is a test context that gives up well before the test binary's timeout.
func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}
