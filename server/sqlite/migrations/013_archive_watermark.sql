-- The incremental archiver (server/archive.go): every row of a conversation
-- up to archived_through is archived or has nothing to move; archive_at is
-- when the first row after it was stored (unix ns), 0 while not looked at.
-- The partial index holds only the conversations with rows after their
-- watermark, so a pass finds what is due without reading the messages table.
-- A send moves last_seq, which puts a fully archived conversation back in the
-- index (at 0: the archiver looks at it once, then records its first row's
-- time); an existing database's conversations all start there.
ALTER TABLE conversations ADD COLUMN archived_through INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN archive_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX conversations_archive_due ON conversations (archive_at) WHERE archived_through < last_seq;
