package localstore

import (
	"context"
	"path/filepath"
)

// TB is the part of testing.TB that MustOpen uses. Declared here so that this
// package, which the chat binary links, does not import testing.
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// MustOpen opens a cache in a fresh temporary directory for a test, owned by the
// user "me" unless opts says otherwise, and closes it when the test ends.
func MustOpen(tb TB, opts ...Options) *Store {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.UserID == "" {
		o.UserID = "me"
	}
	s, err := Open(context.Background(), filepath.Join(tb.TempDir(), "cache.db"), o)
	if err != nil {
		tb.Fatalf("open cache: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
