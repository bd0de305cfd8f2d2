-- What the sender's client said of an attachment's file (name, type, size),
-- as JSON; '' for none. For display only.
ALTER TABLE messages ADD COLUMN attachment_info TEXT NOT NULL DEFAULT '';
