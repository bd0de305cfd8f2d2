package localstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// searchText is what a search matches in m, and draws its snippet from: a
// message's text, or a membership event's line with user ids ("alice added
// carol and dave"). The cache knows no display names, and a name changed
// later would leave the index saying the old one.
func searchText(m wire.Message) string {
	if wire.IsMembershipKind(m.Kind) {
		return m.MembershipLine(nil)
	}
	return m.Content
}

// indexMembershipLines adds every membership line waiting in
// search_line_queue to the index, and empties the queue. They are indexed
// all at once, whatever step IndexQueued takes: one per change to a group,
// they are few beside the messages. The line is composed here, where
// wire.Message.MembershipLine writes it, rather than again in SQL.
func indexMembershipLines(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+prefixed("m.", messageColumns)+`, q.docid FROM search_line_queue q
		CROSS JOIN search_convs s ON s.num = q.docid >> 32
		CROSS JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = (q.docid & 4294967295)
		ORDER BY q.docid`) // in docid order, as the index takes its inserts best
	if err != nil {
		return fmt.Errorf("index membership lines for search: %w", err)
	}
	type line struct {
		docid int64
		text  string
	}
	var lines []line
	for rows.Next() {
		var docid int64
		m, err := scanMessage(rows, &docid)
		if err != nil {
			rows.Close()
			return fmt.Errorf("index membership lines for search: %w", err)
		}
		if t := searchText(m); wire.IsMembershipKind(m.Kind) && t != "" {
			lines = append(lines, line{docid, t})
		}
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index membership lines for search: %w", err)
	}
	if len(lines) > 0 {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO message_search (docid, content) VALUES (?, ?)`)
		if err != nil {
			return fmt.Errorf("index membership lines for search: %w", err)
		}
		defer ins.Close()
		for _, l := range lines {
			if _, err := ins.ExecContext(ctx, l.docid, l.text); err != nil {
				return fmt.Errorf("index membership line %d for search: %w", l.docid, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM search_line_queue`); err != nil {
		return fmt.Errorf("index membership lines for search: %w", err)
	}
	return nil
}
