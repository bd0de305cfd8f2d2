package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// MemberStatus returns one member's cached boundaries in a conversation, or
// ErrNotFound: what the session reports after a member's message moved them
// (a reply implies read), one row where Statuses reads the whole group.
func (s *Store) MemberStatus(ctx context.Context, conversationID, userID string) (wire.MemberStatus, error) {
	st := wire.MemberStatus{UserID: userID}
	err := s.db.QueryRowContext(ctx, `SELECT last_delivered_seq, last_read_seq FROM member_status
		WHERE conversation_id = ? AND user_id = ?`, conversationID, userID).Scan(&st.LastDeliveredSeq, &st.LastReadSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("status of %s in %s: %w", userID, conversationID, ErrNotFound)
	}
	if err != nil {
		return st, fmt.Errorf("status of %s in %s: %w", userID, conversationID, err)
	}
	return st, nil
}
