-- Full-text search over the cached messages (docs/tui.md, "Search"). FTS4:
-- mattn/go-sqlite3 builds it in by default (FTS5 would need a build tag on
-- every build). The messages table has no rowid, so search_ids gives each
-- searchable message (not an event, with text) the integer the index keys
-- its text by.
--
-- A message is not indexed as it arrives: an FTS insert in every one-message
-- transaction doubled the cost of storing a message. Triggers queue it in
-- search_queue instead, and Search indexes the queue in one go before it
-- looks (Store.Search). An edit or delete takes the old text out of the index
-- at once and queues the new.
CREATE TABLE search_ids (
	docid           INTEGER PRIMARY KEY AUTOINCREMENT,
	conversation_id TEXT    NOT NULL,
	seq_no          INTEGER NOT NULL,
	UNIQUE (conversation_id, seq_no)
);
CREATE TABLE search_queue (docid INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE message_search USING fts4(content, tokenize=unicode61 "remove_diacritics=2");

CREATE TRIGGER messages_search_insert AFTER INSERT ON messages
WHEN new.kind = '' AND new.content <> ''
BEGIN
	INSERT OR IGNORE INTO search_ids (conversation_id, seq_no) VALUES (new.conversation_id, new.seq_no);
	INSERT OR IGNORE INTO search_queue (docid)
		SELECT docid FROM search_ids WHERE conversation_id = new.conversation_id AND seq_no = new.seq_no;
END;

CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages
WHEN new.kind = '' AND new.content IS NOT old.content
BEGIN
	DELETE FROM message_search WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = new.conversation_id AND seq_no = new.seq_no);
	INSERT OR IGNORE INTO search_ids (conversation_id, seq_no)
		SELECT new.conversation_id, new.seq_no WHERE new.content <> '';
	INSERT OR IGNORE INTO search_queue (docid)
		SELECT docid FROM search_ids
		WHERE conversation_id = new.conversation_id AND seq_no = new.seq_no AND new.content <> '';
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages
BEGIN
	DELETE FROM message_search WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no);
	DELETE FROM search_queue WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no);
	DELETE FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no;
END;

-- What the cache held before this version waits in the queue like the rest.
INSERT INTO search_ids (conversation_id, seq_no)
	SELECT conversation_id, seq_no FROM messages WHERE kind = '' AND content <> '' ORDER BY conversation_id, seq_no;
INSERT INTO search_queue (docid) SELECT docid FROM search_ids;
