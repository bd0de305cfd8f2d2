-- Mentions (docs/tui.md, "Mentions"): each message keeps the mentions the
-- server resolved (comma-separated), and whether they name this cache's
-- user (by id, @all or @here, not from themself), so that the inbox counts
-- unread mentions and the mentions view lists them through one small index.
ALTER TABLE messages ADD COLUMN mentions TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN mentions_me INTEGER NOT NULL DEFAULT 0;
CREATE INDEX messages_mentioning_me ON messages (conversation_id, seq_no) WHERE mentions_me = 1;
