package localstore

import (
	"context"
	"fmt"
)

// TrimMessages drops a conversation's cached messages with seq_no below
// belowSeq, and returns how many it dropped. The cursor and the inbox row
// stay, so syncing and acking go on from where they were; for a cache that
// must stay bounded (chat tail's, which never reads old messages back).
func (s *Store) TrimMessages(ctx context.Context, conversationID string, belowSeq int64) (int64, error) {
	res, err := s.exec(ctx, `DELETE FROM messages WHERE conversation_id = ? AND seq_no < ?`, conversationID, belowSeq)
	if err != nil {
		return 0, fmt.Errorf("trim messages of %s: %w", conversationID, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
