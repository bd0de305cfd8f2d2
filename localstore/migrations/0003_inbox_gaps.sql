-- gaps: how many seq_nos between our read boundary and last_seq hold no message
-- (a number the server took for a write that then failed), as the server's
-- unread count said. Unread is last_seq - last_read_seq - gaps: it counts
-- messages, not numbers.
ALTER TABLE inbox ADD COLUMN gaps INTEGER NOT NULL DEFAULT 0;
