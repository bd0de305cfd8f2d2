-- Mentions (docs/protocol.md, "Mentions"). A message keeps the mentions the
-- server resolved at send (user ids and @all/@here, comma-separated); each
-- member it mentions gets a row here in the same write, so the inbox counts
-- a member's unread mentions (rows after their read boundary) and
-- GET /v1/mentions lists them without reading any message that does not
-- mention them.
ALTER TABLE messages ADD COLUMN mentions TEXT NOT NULL DEFAULT '';
CREATE TABLE mentions (
	user_id         TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq_no          INTEGER NOT NULL,
	PRIMARY KEY (user_id, conversation_id, seq_no)
) WITHOUT ROWID;
-- A group's mention setting: @all and @here for its admins only. A table of
-- its own, since few groups set it.
CREATE TABLE mention_settings (
	conversation_id TEXT PRIMARY KEY,
	all_admins_only INTEGER NOT NULL
) WITHOUT ROWID;
