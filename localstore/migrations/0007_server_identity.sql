-- What the cache knows of its server: 'store_id', the server's store identity
-- as of the last reconciliation (docs/protocol.md, "Store identity"). A cache
-- from before it has none, and takes the server's at the next connect.
CREATE TABLE meta (
	key   TEXT NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
