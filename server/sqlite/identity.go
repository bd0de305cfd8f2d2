package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// The store's identity (server.IdentityStore) is the meta row 'store_id',
// made by migration 008.

func (s *Store) StoreID(ctx context.Context) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'store_id'`).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("read the store id: %w", err)
	}
	return id, nil
}

func (s *Store) RotateStoreID(ctx context.Context) (string, error) {
	id := NewStoreID()
	err := s.write(ctx, func(tx *sql.Tx) error { return setStoreID(ctx, tx, id) })
	if err != nil {
		return "", fmt.Errorf("rotate the store id: %w", err)
	}
	return id, nil
}

// NewStoreID draws a random store id: 32 hex digits.
func NewStoreID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func setStoreID(ctx context.Context, tx *sql.Tx, id string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('store_id', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, id)
	return err
}

// RotateStoreIDAt gives the database at path, which no server has open (a
// restore's staged copy, or a data directory whose server is stopped), a new
// store id and returns it. A database from before store ids is left as it is
// and "" returned: its first start makes it an id of its own, new too.
func RotateStoreIDAt(ctx context.Context, path string) (string, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&mode=rw&_txlock=immediate")
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	if version < storeIDSchema {
		return "", nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("rotate the store id of %s: %w", path, err)
	}
	id := NewStoreID()
	if err := setStoreID(ctx, tx, id); err != nil {
		return "", errors.Join(fmt.Errorf("rotate the store id of %s: %w", path, err), tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("rotate the store id of %s: %w", path, err)
	}
	return id, nil
}

// storeIDSchema is the schema that added the meta table (008_store_id.sql).
const storeIDSchema = 8
