-- An attachment's file name, type and size as the sender said (JSON; '' for
-- none), for display.
ALTER TABLE messages ADD COLUMN attachment_info TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN attachment_info TEXT NOT NULL DEFAULT '';
