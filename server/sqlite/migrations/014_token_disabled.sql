-- A token whose account an admin disabled is kept, marked, so the server
-- answers it with account_disabled instead of "unknown or expired".
ALTER TABLE tokens ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
