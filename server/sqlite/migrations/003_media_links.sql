-- Which conversations a media_id was sent in: only their members (and the
-- uploader) may fetch it.
CREATE TABLE media_links (
	media_id        TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	PRIMARY KEY (media_id, conversation_id)
) WITHOUT ROWID;
