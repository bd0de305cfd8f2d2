-- The store's identity (server.IdentityStore): a random id that a restore
-- replaces, so that clients can tell a store rolled back under them. A
-- database from before this migration gets one here, on its first start.
INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
