-- left_seq: the seq_no of the event by which the user left the conversation
-- or was removed from it (0: a member). The row and its messages stay, so a
-- rejoin needs no history again and search still finds what was said, but
-- the inbox lists only conversations with left_seq = 0. Anything newer than
-- left_seq reaching the cache (the user added back or joining again, a
-- message only members get) sets it back to 0.
ALTER TABLE inbox ADD COLUMN left_seq INTEGER NOT NULL DEFAULT 0;
