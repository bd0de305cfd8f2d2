package localstore

import (
	"context"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// unreadMentionsColumn is an inbox row's count of cached messages after the
// read boundary that mention the user (messages_mentioning_me), up to
// wire.MaxUnread. It counts what the cache holds: a device that has not
// fetched a conversation's unread messages counts fewer than the server's
// GET /v1/inbox does.
const unreadMentionsColumn = `(SELECT COUNT(*) FROM (SELECT 1 FROM messages mm
	WHERE mm.conversation_id = inbox.conversation_id AND mm.mentions_me = 1 AND mm.seq_no > inbox.last_read_seq
	LIMIT 1000))` // wire.MaxUnread

// Mentions returns up to limit cached messages that mention the user (by id,
// @all or @here; never their own), newest first.
func (s *Store) Mentions(ctx context.Context, limit int) ([]wire.Message, error) {
	if limit <= 0 {
		limit = wire.DefaultPageSize
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE mentions_me = 1 AND deleted = 0 ORDER BY timestamp DESC, seq_no DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("cached mentions: %w", err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("cached mentions: %w", err)
	}
	return msgs, nil
}
