package localstore

import (
	"context"
	"path/filepath"
	"testing"
)

// MustOpen opens a cache in a fresh temporary directory for a test, owned by the
// user "me" unless opts says otherwise, and closes it when the test ends.
func MustOpen(tb testing.TB, opts ...Options) *Store {
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
