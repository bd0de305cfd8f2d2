package localstore

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chatterm/chat/wire"
)

// oldCache makes a cache file as a chat at migration version left it: the
// first version migrations applied and user_version set, so that Open
// migrates it from there. The connection to it is the old chat's, for
// rows the test writes as that chat did; openOldCache closes it.
func oldCache(t *testing.T, version int) (path string, raw *sql.DB) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "cache.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, name := range names[:version] {
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, version)); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// insertOld stores ms through an old cache's connection, a row each, with
// their kinds (migration 0004 on), so that its triggers queue them for
// search as they did.
func insertOld(t *testing.T, raw *sql.DB, ms ...wire.Message) {
	t.Helper()
	for _, m := range ms {
		if _, err := raw.Exec(`INSERT INTO messages (conversation_id, seq_no, message_id, sender_id, content, timestamp, kind)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, m.ConversationID, m.SeqNo, m.MessageID, m.SenderID, cachedContent(m), m.SeqNo, m.Kind); err != nil {
			t.Fatal(err)
		}
	}
}

// openOldCache closes the old chat's connection and opens the cache as
// this one does, migrating it; the store is closed at the test's end.
func openOldCache(t *testing.T, path string, raw *sql.DB) *Store {
	t.Helper()
	raw.Close()
	s, err := Open(ctx, path, Options{UserID: "me"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
