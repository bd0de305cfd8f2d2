package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// Snapshot writes a consistent copy of the database at path to dst, a file
// that must not exist, while a server keeps writing to it: VACUUM INTO reads
// one snapshot under a read transaction, which in WAL mode never blocks the
// writer, and writes it out compacted. What the snapshot holds is every
// transaction committed before it began.
func Snapshot(ctx context.Context, path, dst string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&mode=rw")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return nil
}

// Check verifies the database at path (PRAGMA integrity_check) without
// migrating it, and says which schema it is at.
func Check(ctx context.Context, path string) (schema int, err error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&result); err != nil {
		return 0, fmt.Errorf("check %s: %w", path, err)
	}
	if result != "ok" {
		return 0, fmt.Errorf("check %s: the database is damaged: %s", path, result)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&schema); err != nil {
		return 0, fmt.Errorf("check %s: %w", path, err)
	}
	return schema, nil
}
