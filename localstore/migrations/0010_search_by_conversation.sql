-- The full-text index keyed so that one conversation's messages are one
-- range of docids, in seq_no order: docid = conversation number << 32 |
-- seq_no (search_convs numbers the conversations). A search in one
-- conversation (chat search --with, / in a chat) is then a docid range of
-- the index read newest first, which stops after the page it wants; with
-- docids in arrival order it had to join every hit to its conversation and
-- sort them all (localstore/search.go). A seq_no of 2^32 or more does not
-- fit the key, and such a message is not searchable.
--
-- The index is rebuilt: every searchable message waits in search_queue
-- again, and the next search indexes it (in steps, saying so, in the TUI).
CREATE TABLE search_convs (
	num             INTEGER PRIMARY KEY,
	conversation_id TEXT NOT NULL UNIQUE
);

DROP TRIGGER messages_search_insert;
DROP TRIGGER messages_search_update;
DROP TRIGGER messages_search_delete;
DROP TABLE search_queue;
DROP TABLE search_ids;
DROP TABLE message_search;

CREATE TABLE search_ids (
	docid           INTEGER PRIMARY KEY,
	conversation_id TEXT    NOT NULL,
	seq_no          INTEGER NOT NULL,
	UNIQUE (conversation_id, seq_no)
);
CREATE TABLE search_queue (docid INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE message_search USING fts4(content, tokenize=unicode61 "remove_diacritics=2");

CREATE TRIGGER messages_search_insert AFTER INSERT ON messages
WHEN new.kind = '' AND new.content <> '' AND new.seq_no < 4294967296
BEGIN
	INSERT OR IGNORE INTO search_convs (conversation_id) VALUES (new.conversation_id);
	INSERT OR IGNORE INTO search_ids (docid, conversation_id, seq_no)
		SELECT num << 32 | new.seq_no, new.conversation_id, new.seq_no
		FROM search_convs WHERE conversation_id = new.conversation_id;
	INSERT OR IGNORE INTO search_queue (docid)
		SELECT docid FROM search_ids WHERE conversation_id = new.conversation_id AND seq_no = new.seq_no;
END;

CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages
WHEN new.kind = '' AND new.content IS NOT old.content AND new.seq_no < 4294967296
BEGIN
	DELETE FROM message_search WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = new.conversation_id AND seq_no = new.seq_no);
	INSERT OR IGNORE INTO search_convs (conversation_id) SELECT new.conversation_id WHERE new.content <> '';
	INSERT OR IGNORE INTO search_ids (docid, conversation_id, seq_no)
		SELECT num << 32 | new.seq_no, new.conversation_id, new.seq_no
		FROM search_convs WHERE conversation_id = new.conversation_id AND new.content <> '';
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

INSERT INTO search_convs (conversation_id)
	SELECT DISTINCT conversation_id FROM messages WHERE kind = '' AND content <> '' ORDER BY conversation_id;
INSERT INTO search_ids (docid, conversation_id, seq_no)
	SELECT c.num << 32 | m.seq_no, m.conversation_id, m.seq_no
	FROM messages m JOIN search_convs c ON c.conversation_id = m.conversation_id
	WHERE m.kind = '' AND m.content <> '' AND m.seq_no < 4294967296;
INSERT INTO search_queue (docid) SELECT docid FROM search_ids;
