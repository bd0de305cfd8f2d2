package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// testdata/schema3.db was made by the store as it was before migration 004
// (commit 2828dbf, schema 3), through its own API: alice (the first account,
// admin, status "on call"), bob and carol; a direct conversation of alice and
// bob with 30 messages (every third from bob) and a group
// "team" with 10 messages from carol. Opening it with this build migrates it
// in place; everything it held must still read the same, and what the
// migration adds must read as its default.
func TestUpgradeFromSchema3(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/schema3.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chat.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if schema, err := sqlite.Check(ctx, path); err != nil || schema != 3 {
		t.Fatalf("the fixture is at schema %d (%v), want 3", schema, err)
	}
	st, err := sqlite.Open(path, sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open (and migrate) the schema-3 database: %v", err)
	}
	u, err := st.GetUser(ctx, "alice")
	if err != nil || u.DisplayName != "Alice" || u.Status != "on call" || !u.Admin || string(u.PasswordHash) != "hash-alice" || u.HidePresence {
		t.Fatalf("alice after the upgrade: %+v, %v", u, err)
	}
	if id, err := st.FirstUser(ctx); err != nil || id != "alice" {
		t.Fatalf("first user after the upgrade: %q, %v", id, err)
	}
	dm := wire.DirectConversationID("alice", "bob")
	msgs, err := st.ListMessagesAfter(ctx, dm, 0, 100)
	if err != nil || len(msgs) != 30 || msgs[0].MessageID != "dm-01" || msgs[29].Content != "direct message 30" || msgs[2].SenderID != "bob" {
		t.Fatalf("the direct conversation after the upgrade: %d messages, %v", len(msgs), err)
	}
	// A sender's boundaries follow their own messages: bob sent 30, alice 29.
	sts, err := st.ListStatuses(ctx, dm, []string{"alice", "bob"})
	if err != nil || len(sts) != 2 || sts[0].LastReadSeq != 29 || sts[1].LastDeliveredSeq != 30 || sts[1].LastReadSeq != 30 {
		t.Fatalf("the boundaries after the upgrade: %+v, %v", sts, err)
	}
	if n, err := st.CountMessages(ctx, "g:fixture", 0, 10, 100); err != nil || n != 10 {
		t.Fatalf("the group after the upgrade: %d messages, %v", n, err)
	}
	pend, err := st.ListPending(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(pend) == 0 {
		t.Fatal("alice's pending rows are gone after the upgrade")
	}
	// What the migration added works on the old rows.
	hide := true
	if u, err := st.UpdateProfile(ctx, "bob", server.ProfileChange{HidePresence: &hide}); err != nil || !u.HidePresence || u.DisplayName != "Bob" {
		t.Fatalf("hide_presence on an upgraded user: %+v, %v", u, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if schema, err := sqlite.Check(ctx, path); err != nil || schema != sqlite.SchemaVersion() {
		t.Fatalf("after the upgrade: schema %d (%v), want %d", schema, err, sqlite.SchemaVersion())
	}
}
