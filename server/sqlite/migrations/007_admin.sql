-- Administration (chat admin): a disabled account, a one-time password-reset
-- code (its hash and expiry), and an index to end all of a user's sessions.
ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN reset_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN reset_expires INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tokens_by_user ON tokens (user_id);
