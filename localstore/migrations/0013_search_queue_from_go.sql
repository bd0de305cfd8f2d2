-- A stored message is queued for the search index by the transaction that
-- stores it (searchqueue.go), in one statement a commit, not by a trigger
-- firing three inserts for each message: those were a quarter to a third of
-- what storing a burst cost the TUI (docs/tui.md).
--
-- search_ids goes: a docid is the conversation's number shifted 32 bits
-- left, plus the seq_no (migration 0010), so search_convs alone turns one
-- into its message and back; keeping a row of it for every message was two
-- more B-tree inserts a message. The triggers for edits and deletes stay,
-- finding the docid through search_convs: each fires for one event. What
-- waits in search_queue and search_line_queue now stays there (its docids
-- are the same), and the next search indexes it.
DROP TRIGGER messages_search_insert;
DROP TRIGGER messages_search_line_insert;
DROP TRIGGER messages_search_update;
DROP TRIGGER messages_search_delete;
DROP TABLE search_ids;

CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages
WHEN new.kind = '' AND new.content IS NOT old.content AND new.seq_no < 4294967296
BEGIN
	DELETE FROM message_search WHERE docid =
		(SELECT num << 32 | new.seq_no FROM search_convs WHERE conversation_id = new.conversation_id);
	INSERT OR IGNORE INTO search_convs (conversation_id) SELECT new.conversation_id WHERE new.content <> '';
	INSERT OR IGNORE INTO search_queue (docid)
		SELECT num << 32 | new.seq_no FROM search_convs
		WHERE conversation_id = new.conversation_id AND new.content <> '';
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages
WHEN old.seq_no < 4294967296
BEGIN
	DELETE FROM message_search WHERE docid =
		(SELECT num << 32 | old.seq_no FROM search_convs WHERE conversation_id = old.conversation_id);
	DELETE FROM search_queue WHERE docid =
		(SELECT num << 32 | old.seq_no FROM search_convs WHERE conversation_id = old.conversation_id);
	DELETE FROM search_line_queue WHERE docid =
		(SELECT num << 32 | old.seq_no FROM search_convs WHERE conversation_id = old.conversation_id);
END;
