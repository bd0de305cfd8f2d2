package localstore

import (
	"context"
	"database/sql"
	"fmt"
)

// Left conversations (migration 0011): the user's own "left" or "removed"
// event marks the conversation's inbox row with its seq_no, and Inbox lists
// only unmarked rows, on every device, since each gets the event. The
// messages are kept: the server refuses a former member its history, so the
// cache is the only copy the user has of what they took part in (search
// still finds it), and a rejoin shows it again without fetching it twice.

// markLeft sets conv's left_seq to left (0: a member again) when the change
// is newer than the mark it replaces: an event from an older history page
// (at or below the mark) is history, and changes nothing now.
func markLeft(ctx context.Context, tx *sql.Tx, conv string, left, at int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE inbox SET left_seq = ? WHERE conversation_id = ? AND left_seq < ?`, left, conv, at)
	return err
}

// MarkLeftUnlisted takes out of the inbox the conversations of cached that
// the server's inbox (listed) does not hold, each at its cached last_seq, so
// anything newer brings it back; not one with nothing from the server yet
// (a first message still in the outbox). Only for a complete answer (a page not
// full) and for conversations cached before it was asked for: a device that
// was offline when the user left never gets the event (the server delivers
// to members), and a conversation the server's answer predates is not gone.
func (s *Store) MarkLeftUnlisted(ctx context.Context, cached, listed []string) (int, error) {
	on := make(map[string]bool, len(listed))
	for _, conv := range listed {
		on[conv] = true
	}
	n := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, conv := range cached {
			if on[conv] {
				continue
			}
			res, err := tx.ExecContext(ctx, `UPDATE inbox SET left_seq = last_seq WHERE conversation_id = ? AND left_seq = 0 AND last_seq > 0`, conv)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("mark unlisted conversations left: %w", err)
	}
	return n, nil
}
