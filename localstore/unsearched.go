package localstore

import (
	"context"
	"errors"
	"fmt"
)

// unsearched drops the triggers that keep the search index in step with
// edits and deletes (migrations 0010, 0012, 0013); with Store.unsearchedCache
// set, stored messages are not queued either (searchqueue.go). Queueing
// was about a third of what storing a burst cost a cache nothing ever
// searches (chat tail's; docs/tui.md). Only an in-memory cache may drop
// them: a file keeps its schema, and the next migration and every later
// search expect them.
func (s *Store) unsearched(ctx context.Context) error {
	if !s.memory {
		return errors.New("only an in-memory cache can be left unsearched")
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_master
		WHERE type = 'trigger' AND tbl_name = 'messages' AND name LIKE 'messages\_search\_%' ESCAPE '\'`)
	if err != nil {
		return fmt.Errorf("find the search triggers: %w", err)
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("find the search triggers: %w", err)
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find the search triggers: %w", err)
	}
	for _, name := range names {
		if _, err := s.exec(ctx, `DROP TRIGGER "`+name+`"`); err != nil {
			return fmt.Errorf("drop trigger %s: %w", name, err)
		}
	}
	return nil
}
