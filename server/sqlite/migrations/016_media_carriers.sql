-- The messages that carry a sent upload (conversation_id/message_id), as a
-- set: deleting one takes it out, and the upload goes with the last. The
-- carrier and shared columns before it knew only the first carrier; an
-- upload marked shared had others no one recorded, so it keeps a marker
-- carrier no delete removes (kept for good, as before). links counts the
-- links made, so a failed send's unlink can tell that a resend linked the
-- upload again meanwhile.
CREATE TABLE media_carriers (
	media_id TEXT NOT NULL,
	carrier  TEXT NOT NULL,
	PRIMARY KEY (media_id, carrier)
) WITHOUT ROWID;
INSERT INTO media_carriers (media_id, carrier) SELECT media_id, carrier FROM media_uploads WHERE carrier != '';
INSERT OR IGNORE INTO media_carriers (media_id, carrier) SELECT media_id, '#unknown' FROM media_uploads WHERE shared != 0;
ALTER TABLE media_uploads ADD COLUMN links INTEGER NOT NULL DEFAULT 0;
