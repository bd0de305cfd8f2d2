-- What the person typed and has not lost yet, kept across restarts
-- (docs/tui.md, "Drafts and input history"): the unsent text of each
-- conversation's composer, and what was sent from it, newest last, for up
-- and ctrl+p. Both belong to this device: they are never synced.
CREATE TABLE drafts (
	conversation_id TEXT NOT NULL PRIMARY KEY,
	text            TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE input_history (
	conversation_id TEXT    NOT NULL,
	n               INTEGER NOT NULL, -- grows with each text sent: the order
	text            TEXT    NOT NULL,
	PRIMARY KEY (conversation_id, n)
) WITHOUT ROWID;
