package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// A store from before identities gets one on its first start, and keeps it.
	id, err := st.StoreID(ctx)
	if err != nil || len(id) != 32 {
		t.Fatalf("the store id after the upgrade: %q, %v", id, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if schema, err := sqlite.Check(ctx, path); err != nil || schema != sqlite.SchemaVersion() {
		t.Fatalf("after the upgrade: schema %d (%v), want %d", schema, err, sqlite.SchemaVersion())
	}
	st, err = sqlite.Open(path, sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if again, err := st.StoreID(ctx); err != nil || again != id {
		t.Fatalf("the store id after a restart: %q, %v; want %q", again, err, id)
	}
}

// A database a newer build migrated is refused, with what to do, and left
// as it was: an older build must not write to tables it does not know.
func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chat.db")
	st, err := sqlite.Open(path, sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	newer := sqlite.SchemaVersion() + 1
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(path, sqlite.Options{NoSync: true})
	if !errors.Is(err, server.ErrNewerSchema) || !strings.Contains(err.Error(), fmt.Sprintf("sqlite schema %d, this chatserver knows up to %d", newer, sqlite.SchemaVersion())) {
		t.Fatalf("open a database of schema %d: %v", newer, err)
	}
	if schema, err := sqlite.Check(ctx, path); err != nil || schema != newer {
		t.Fatalf("after the refusal: schema %d (%v), want %d unchanged", schema, err, newer)
	}
}

// A store at sqlite schema 15 knew an upload's first carrier (carrier) and
// that another message sent it too (shared), not the others. Migration 016
// makes the carriers a set: an upload with one carrier is released by its
// message's delete, as before; one marked shared keeps a carrier no delete
// removes, so it stays for good, as before (its other carriers were never
// recorded); an upload not sent stays unsent.
func TestUpgradeMediaCarriersFromSchema15(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chat.db")
	st, err := sqlite.Open(path, sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"media/ann/one", "media/ann/shared", "media/ann/unsent"} {
		was, _ := st.MediaUsage(ctx, "ann")
		next := was
		next.Bytes += 10
		next.Uploads++
		next.Version++
		if err := st.ReserveMedia(ctx, server.MediaUpload{MediaID: id, Owner: "ann", Size: 10, CreatedAt: time.Unix(int64(i), 0)}, was, next); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to schema 15, the uploads as it recorded them.
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE media_carriers`,
		`ALTER TABLE media_uploads DROP COLUMN links`,
		`UPDATE media_uploads SET state = 'sent', carrier = 'g:x/m1' WHERE media_id = 'media/ann/one'`,
		`UPDATE media_uploads SET state = 'sent', carrier = 'g:x/m2', shared = 1 WHERE media_id = 'media/ann/shared'`,
		`PRAGMA user_version = 15`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err = sqlite.Open(path, sqlite.Options{NoSync: true})
	if err != nil {
		t.Fatalf("open (and migrate) the schema-15 database: %v", err)
	}
	defer st.Close()
	if schema, err := sqlite.Check(ctx, path); err != nil || schema != 16 {
		t.Fatalf("after the upgrade: schema %d (%v), want 16", schema, err)
	}
	if _, err := st.ReleaseMedia(ctx, "media/ann/shared", "g:x", "m2"); !errors.Is(err, server.ErrNotApplied) {
		t.Fatalf("releasing a shared upload of schema 15 by its first carrier = %v, want ErrNotApplied (kept)", err)
	}
	if up, err := st.ReleaseMedia(ctx, "media/ann/one", "g:x", "m1"); err != nil || up.Size != 10 {
		t.Fatalf("releasing a schema-15 upload by its carrier = %+v, %v; want it released", up, err)
	}
	ups, err := st.UnsentMedia(ctx, time.Unix(100, 0), 10)
	if err != nil || len(ups) != 2 || ups[0].MediaID != "media/ann/one" || ups[1].MediaID != "media/ann/unsent" {
		t.Fatalf("the sweep's view after the upgrade: %+v, %v; want the released and the unsent upload", ups, err)
	}
	// A new link on an upgraded upload counts from there.
	if n, err := st.LinkMedia(ctx, "media/ann/unsent", "g:x", "m3"); err != nil || n != 1 {
		t.Fatalf("linking an upgraded upload = %d, %v; want link 1", n, err)
	}
}
