-- Upload records and each user's media usage (the quota and byte rate of
-- POST /v1/media). state is 'unsent' from the reservation, 'sent' once a
-- message carries the upload, 'expiring' while the sweep deletes it; the
-- partial index holds only the uploads not sent, so a sweep reads those and
-- not the table.
CREATE TABLE media_uploads (
	media_id   TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	size       INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	state      TEXT NOT NULL DEFAULT 'unsent'
) WITHOUT ROWID;
CREATE INDEX media_uploads_unsent ON media_uploads (created_at) WHERE state != 'sent';
CREATE TABLE media_usage (
	user_id TEXT PRIMARY KEY,
	bytes   INTEGER NOT NULL,
	uploads INTEGER NOT NULL,
	rate_at INTEGER NOT NULL,
	version INTEGER NOT NULL
) WITHOUT ROWID;
