-- Replies, reactions, edits and deletes (docs/protocol.md, "Events"). An event
-- is a row like a message, with a kind and the seq_no it changes; what events
-- did to a message is kept on the message's own row, so a page of history
-- shows messages as they are now.
ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN target_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN reply_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN reactions TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN updated_seq INTEGER NOT NULL DEFAULT 0;
-- A delete finds the target's earlier edits (to clear their content) here;
-- only events have a target_seq, so the index holds nothing else.
CREATE INDEX messages_by_target ON messages (conversation_id, target_seq) WHERE target_seq > 0;
-- The seq_no of the message the preview shows: an edit or delete of it
-- changes the preview. Every row so far is a message.
ALTER TABLE conversations ADD COLUMN last_message_seq INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET last_message_seq = last_seq;
