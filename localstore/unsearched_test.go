package localstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// An unsearched cache (chat tail's) stores, edits and deletes messages as
// any cache does, but queues none of them for the search index; a cache on
// disk cannot be made one.
func TestUnsearchedQueuesNothingForSearch(t *testing.T) {
	queued := func(s *Store) int {
		t.Helper()
		var n int
		// In either queue: texts, membership lines.
		if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM search_queue) + (SELECT count(*) FROM search_line_queue)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	searched, err := Open(ctx, ":memory:", Options{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	defer searched.Close()
	plain, err := Open(ctx, ":memory:", Options{UserID: "me", Unsearched: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, s := range []*Store{searched, plain} {
		for i := range 20 {
			if _, err := s.PutMessages(context.Background(), msg(dm, int64(i+1), "bob", fmt.Sprint("searchable words ", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := queued(searched); n != 20 {
		t.Fatalf("a searched cache queued %d of 20 messages for the index: the triggers this test drops have changed", n)
	}
	if n := queued(plain); n != 0 {
		t.Fatalf("an unsearched cache queued %d messages for the index, want none", n)
	}
	if page, err := plain.Messages(ctx, dm, 0, 50); err != nil || len(page) != 20 {
		t.Fatalf("an unsearched cache holds %d messages (%v), want 20", len(page), err)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "cache.db"), Options{UserID: "me", Unsearched: true}); err == nil {
		t.Fatal("a cache on disk was opened unsearched")
	}
}
