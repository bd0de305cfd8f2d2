-- Replies, reactions, edits and deletes (docs/protocol.md, "Events"): an event
-- is cached like a message (the cursor walks over it) and applied to its
-- target's row; updated_seq is the last event applied there, so an event seen
-- again (a page fetched after it) changes nothing.
ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN target_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN reply_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN reactions TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN updated_seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX messages_by_target ON messages (conversation_id, target_seq) WHERE target_seq > 0;
-- The seq_no of the message the preview shows (an edit or delete of it
-- changes the preview; events never become it).
ALTER TABLE inbox ADD COLUMN last_message_seq INTEGER NOT NULL DEFAULT 0;
UPDATE inbox SET last_message_seq = last_seq;
ALTER TABLE outbox ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN target_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN reply_to INTEGER NOT NULL DEFAULT 0;
