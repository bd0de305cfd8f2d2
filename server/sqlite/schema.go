package sqlite

import "io/fs"

// SchemaVersion is the schema this build migrates a database to: the number
// of migrations embedded, which Open leaves in PRAGMA user_version. Counted
// rather than written down, so it cannot fall behind a new migration.
func SchemaVersion() int {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil { // only a malformed pattern fails, and this one is fixed
		panic(err)
	}
	return len(files)
}
