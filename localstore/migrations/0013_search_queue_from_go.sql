-- A stored message is queued for the search index by the transaction that
-- stores it (searchqueue.go), in a few statements a commit, not by a trigger
-- firing three inserts for each message: those were a quarter to a third of
-- what storing a burst cost the TUI (docs/tui.md). The triggers for edits and
-- deletes stay: each fires for one event. What waits in search_queue and
-- search_line_queue now stays there, and the next search indexes it.
DROP TRIGGER messages_search_insert;
DROP TRIGGER messages_search_line_insert;
