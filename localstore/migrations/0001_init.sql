-- The client's cache. Keys mirror the server's tables: messages by
-- (conversation_id, seq_no), boundaries by (conversation_id, user_id).
-- Times are Unix nanoseconds (0 = unknown).

CREATE TABLE messages (
	conversation_id TEXT    NOT NULL,
	seq_no          INTEGER NOT NULL,
	message_id      TEXT    NOT NULL,
	sender_id       TEXT    NOT NULL,
	content         TEXT    NOT NULL,
	timestamp       INTEGER NOT NULL,
	PRIMARY KEY (conversation_id, seq_no)
) WITHOUT ROWID;

-- Every member's tick boundaries (seed 004), including our own.
CREATE TABLE member_status (
	conversation_id    TEXT    NOT NULL,
	user_id            TEXT    NOT NULL,
	last_delivered_seq INTEGER NOT NULL DEFAULT 0,
	last_read_seq      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (conversation_id, user_id)
) WITHOUT ROWID;

-- One row per conversation; last_delivered_seq and last_read_seq are our own.
CREATE TABLE inbox (
	conversation_id     TEXT    NOT NULL PRIMARY KEY,
	type                TEXT    NOT NULL,
	name                TEXT    NOT NULL DEFAULT '',
	peer                TEXT    NOT NULL DEFAULT '',
	last_seq            INTEGER NOT NULL DEFAULT 0,
	last_message_body   TEXT    NOT NULL DEFAULT '',
	last_message_sender TEXT    NOT NULL DEFAULT '',
	last_message_at     INTEGER NOT NULL DEFAULT 0,
	last_delivered_seq  INTEGER NOT NULL DEFAULT 0,
	last_read_seq       INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The inbox is read most recent first; this index makes that a walk, not a sort.
CREATE INDEX inbox_by_activity ON inbox (last_message_at DESC, conversation_id);

-- Messages typed here that the server has not confirmed. id keeps typing order
-- for resends; message_id is what makes a resend idempotent on the server.
CREATE TABLE outbox (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	message_id      TEXT    NOT NULL UNIQUE,
	conversation_id TEXT    NOT NULL,
	content         TEXT    NOT NULL,
	created_at      INTEGER NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	error_code      TEXT    NOT NULL DEFAULT '',
	error_message   TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX outbox_by_conversation ON outbox (conversation_id, id);

-- The sync cursor: every message of the conversation up to seq_no since the
-- first one this device saw is in the cache.
CREATE TABLE cursors (
	conversation_id TEXT    NOT NULL PRIMARY KEY,
	seq_no          INTEGER NOT NULL
) WITHOUT ROWID;
