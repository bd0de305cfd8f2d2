package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/sqlite"
)

// A restore gives the store a new id, which the restored server says in its
// hello; rotate-store-id does the same for a stopped server's directory and
// refuses a running one's.
func TestRestoreAndRotateChangeTheStoreID(t *testing.T) {
	dir := t.TempDir()
	m := serve(t, dir)
	first := m.node.Service().StoreID()
	if len(first) != 32 {
		t.Fatalf("a new server's store id: %q", first)
	}
	file := filepath.Join(t.TempDir(), "chat.tar.gz")
	if code, errOut := tool("backup", "--data-dir", dir, file); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errOut)
	}
	if code, errOut := tool("rotate-store-id", "--data-dir", dir); code != 1 || !strings.Contains(errOut, "in use by a chatserver") {
		t.Fatalf("rotate-store-id on a running server's directory: exit %d: %s", code, errOut)
	}
	m.Close()

	if code, errOut := tool("restore", "--data-dir", dir, "--force", file); code != 0 || !strings.Contains(errOut, "a new store id") {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	m = serve(t, dir)
	restored := m.node.Service().StoreID()
	if len(restored) != 32 || restored == first {
		t.Fatalf("the restored server's store id: %q (before the restore: %q)", restored, first)
	}
	m.Close()

	code, out, errOut := toolOut("rotate-store-id", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("rotate-store-id: exit %d: %s", code, errOut)
	}
	rotated := strings.TrimSpace(out)
	m = serve(t, dir)
	defer m.Close()
	if got := m.node.Service().StoreID(); got != rotated || got == restored {
		t.Fatalf("after rotate-store-id: store id %q, printed %q (before: %q)", got, rotated, restored)
	}
	if code, errOut := tool("rotate-store-id", "--data-dir", dir, "extra"); code != 2 || !strings.Contains(errOut, "takes no arguments") {
		t.Fatalf("rotate-store-id with an argument: exit %d: %s", code, errOut)
	}
}

// rotate-store-id on DynamoDB tables (after a point-in-time restore, say):
// the tables' id changes to the one printed.
func TestRotateStoreIDOnDynamoDB(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("CHAT_DYNAMO_SKIP_CHECKSUM", "1") // moto gets some checksums wrong
	var b [6]byte
	rand.Read(b[:])
	prefix := "t" + hex.EncodeToString(b[:]) + "-"
	region := "t" + hex.EncodeToString(b[:4]) // moto keeps each region's tables apart
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := dynamo.Open(ctx, dynamo.Options{TablePrefix: prefix, Region: region, Endpoint: endpoint, CallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.DeleteTables(context.Background()) })
	before, err := st.StoreID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := toolOut("rotate-store-id", "--dynamodb-endpoint", endpoint, "--dynamodb-region", region, "--table-prefix", prefix)
	if code != 0 {
		t.Fatalf("rotate-store-id: exit %d: %s", code, errOut)
	}
	after, err := st.StoreID(ctx)
	if err != nil || after != strings.TrimSpace(out) || after == before {
		t.Fatalf("after rotate-store-id: %q, %v; printed %q, before %q", after, err, out, before)
	}
	// Tables that are not there are said as such, and nothing is made.
	code, _, errOut = toolOut("rotate-store-id", "--dynamodb-endpoint", endpoint, "--dynamodb-region", region, "--table-prefix", prefix+"none-")
	if code != 1 || !strings.Contains(errOut, prefix+"none-") {
		t.Fatalf("rotate-store-id on missing tables: exit %d: %s", code, errOut)
	}
}

// A data directory a newer build migrated: chatserver does not start on it,
// says why in one line, and leaves it as it was.
func TestStartRefusesANewerSchema(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir).Close()
	db := filepath.Join(dir, "chat.db")
	newer := sqlite.SchemaVersion() + 1
	if err := setUserVersion(db, newer); err != nil {
		t.Fatal(err)
	}
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("chatserver started on a database of a newer schema")
	}
	want := fmt.Sprintf("the database is at sqlite schema %d, this chatserver knows up to %d", newer, sqlite.SchemaVersion())
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("the refusal: %v", err)
	}
	if schema, err := sqlite.Check(context.Background(), db); err != nil || schema != newer {
		t.Fatalf("after the refusal: schema %d, %v", schema, err)
	}
}

func setUserVersion(path string, v int) error {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}
