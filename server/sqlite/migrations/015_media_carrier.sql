-- The message that carries a sent upload (conversation_id/message_id), so
-- deleting that message deletes the media and gives its bytes back; shared
-- when a second message links it too, and then it is kept.
ALTER TABLE media_uploads ADD COLUMN carrier TEXT NOT NULL DEFAULT '';
ALTER TABLE media_uploads ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
