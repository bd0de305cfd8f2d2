-- Membership lines (someone added, removed, left, joined; a group renamed,
-- its topic set; admin granted or taken) are searchable by the line the
-- conversation shows, written with user ids ("alice added carol and dave",
-- wire.Message.MembershipLine): the cache holds ids, not display names,
-- which may change after the line was indexed. The row keeps only the users
-- (membership.go), so the line is composed in Go when the queue is indexed
-- (Store.IndexQueued). Lines wait in a queue of their own: a step of
-- indexing looks them up without reading the messages' rows again, and
-- finds none there most of the time.
CREATE TABLE search_line_queue (docid INTEGER PRIMARY KEY);

CREATE TRIGGER messages_search_line_insert AFTER INSERT ON messages
WHEN new.kind IN ('added', 'removed', 'left', 'joined', 'renamed', 'topic', 'admin_granted', 'admin_revoked')
	AND new.seq_no < 4294967296
BEGIN
	INSERT OR IGNORE INTO search_convs (conversation_id) VALUES (new.conversation_id);
	INSERT OR IGNORE INTO search_ids (docid, conversation_id, seq_no)
		SELECT num << 32 | new.seq_no, new.conversation_id, new.seq_no
		FROM search_convs WHERE conversation_id = new.conversation_id;
	INSERT OR IGNORE INTO search_line_queue (docid)
		SELECT docid FROM search_ids WHERE conversation_id = new.conversation_id AND seq_no = new.seq_no;
END;

-- The delete trigger of 0010, with the lines' queue.
DROP TRIGGER messages_search_delete;
CREATE TRIGGER messages_search_delete AFTER DELETE ON messages
BEGIN
	DELETE FROM message_search WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no);
	DELETE FROM search_queue WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no);
	DELETE FROM search_line_queue WHERE docid =
		(SELECT docid FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no);
	DELETE FROM search_ids WHERE conversation_id = old.conversation_id AND seq_no = old.seq_no;
END;

-- The membership lines cached before this version wait in the queue, and
-- the next search indexes them.
INSERT OR IGNORE INTO search_convs (conversation_id)
	SELECT DISTINCT conversation_id FROM messages
	WHERE kind IN ('added', 'removed', 'left', 'joined', 'renamed', 'topic', 'admin_granted', 'admin_revoked')
	ORDER BY conversation_id;
INSERT OR IGNORE INTO search_ids (docid, conversation_id, seq_no)
	SELECT c.num << 32 | m.seq_no, m.conversation_id, m.seq_no
	FROM messages m JOIN search_convs c ON c.conversation_id = m.conversation_id
	WHERE m.kind IN ('added', 'removed', 'left', 'joined', 'renamed', 'topic', 'admin_granted', 'admin_revoked')
		AND m.seq_no < 4294967296;
INSERT OR IGNORE INTO search_line_queue (docid)
	SELECT s.docid FROM search_ids s JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = s.seq_no
	WHERE m.kind IN ('added', 'removed', 'left', 'joined', 'renamed', 'topic', 'admin_granted', 'admin_revoked');
