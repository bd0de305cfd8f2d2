package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/server/storetest"
)

// MustOpen opens a store in a temporary directory, closed when the test ends.
func MustOpen(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(filepath.Join(tb.TempDir(), "chat.db"), sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) server.Store { return MustOpen(t) }, storetest.Options{Concurrency: 16, PerWorker: 100})
}
