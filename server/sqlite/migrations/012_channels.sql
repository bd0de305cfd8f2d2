-- Public channels and their topics (docs/protocol.md, "Channels"). Any
-- account lists the channels through the partial index, which holds channels
-- only: the listing reads no group or direct conversation.
ALTER TABLE conversations ADD COLUMN topic TEXT NOT NULL DEFAULT '';
CREATE INDEX conversations_channels ON conversations (conversation_id) WHERE type = 'channel';
