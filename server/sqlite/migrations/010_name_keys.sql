-- The confusable keys of display names and ids (termtext.NameKey): one
-- account per key, so "аlice" (a Cyrillic а) or "Alice" cannot be taken
-- by someone other than alice. Filled for older accounts by the server at
-- start (ClaimNameKeys).
CREATE TABLE name_keys (
	key     TEXT PRIMARY KEY,
	user_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX name_keys_by_user ON name_keys (user_id);
