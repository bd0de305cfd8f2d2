-- Tables mirror DESIGN.md's DynamoDB tables; keys are the same, so every query is a
-- primary-key or index lookup.
CREATE TABLE users (
	user_id       TEXT PRIMARY KEY,
	display_name  TEXT NOT NULL,
	status        TEXT NOT NULL DEFAULT '',
	password_hash BLOB NOT NULL,
	admin         INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL
) WITHOUT ROWID;

-- One row, 'first_user', claimed by the first registration.
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE invites (
	hash       TEXT PRIMARY KEY,
	created_by TEXT NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE tokens (
	hash       TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

-- counter is the fallback sequence (Store.NextSeq) for when the Sequencer is down.
CREATE TABLE conversations (
	conversation_id     TEXT PRIMARY KEY,
	type                TEXT NOT NULL,
	name                TEXT NOT NULL DEFAULT '',
	last_seq            INTEGER NOT NULL DEFAULT 0,
	counter             INTEGER NOT NULL DEFAULT 0,
	last_message_body   TEXT NOT NULL DEFAULT '',
	last_message_sender TEXT NOT NULL DEFAULT '',
	last_message_at     INTEGER NOT NULL DEFAULT 0,
	created_at          INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE participants (
	conversation_id TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	role            TEXT NOT NULL,
	joined_at       INTEGER NOT NULL,
	PRIMARY KEY (conversation_id, user_id)
) WITHOUT ROWID;
-- The participants index of the design: a user's conversations.
CREATE INDEX participants_by_user ON participants (user_id, conversation_id);

CREATE TABLE messages (
	conversation_id TEXT NOT NULL,
	seq_no          INTEGER NOT NULL,
	message_id      TEXT NOT NULL,
	sender_id       TEXT NOT NULL,
	receiver_id     TEXT NOT NULL DEFAULT '',
	content         TEXT NOT NULL,
	ts              INTEGER NOT NULL,
	s3_ref          TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (conversation_id, seq_no)
) WITHOUT ROWID;
-- The idempotency record: one message per (conversation_id, message_id).
CREATE UNIQUE INDEX messages_by_message_id ON messages (conversation_id, message_id);

CREATE TABLE message_status (
	user_id            TEXT NOT NULL,
	conversation_id    TEXT NOT NULL,
	last_delivered_seq INTEGER NOT NULL DEFAULT 0,
	last_read_seq      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, conversation_id)
) WITHOUT ROWID;

-- last_pending_seq lets an ack clear the row only when nothing newer is pending.
CREATE TABLE pending_deliveries (
	receiver_id           TEXT NOT NULL,
	conversation_id       TEXT NOT NULL,
	first_undelivered_seq INTEGER NOT NULL,
	last_pending_seq      INTEGER NOT NULL,
	PRIMARY KEY (receiver_id, conversation_id)
) WITHOUT ROWID;
