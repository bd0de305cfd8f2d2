-- Messages may carry an attachment: a media_id (POST /v1/media). Content may
-- then be empty.
ALTER TABLE messages ADD COLUMN attachment TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN attachment TEXT NOT NULL DEFAULT '';
