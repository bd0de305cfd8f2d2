package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// Batch is what PutBatch stored, and what it left behind: the cursors to ack
// and the senders' boundaries to show, known inside the transaction, so the
// receive path does not read them again after the commit.
type Batch struct {
	Added     []wire.Message // new messages, in the order given
	Conflicts []wire.Message // see PutMessagesChecked
	// Cursors holds every conversation of the batch that has a sync cursor,
	// as it stands after the commit (Cursor would read the same).
	Cursors map[string]int64
	// Senders holds, for each sender of an added message who has
	// boundaries in its conversation after the commit, those boundaries
	// (MemberStatus would read the same; one who left has none).
	Senders []SenderStatus
}

// SenderStatus is one member's cached boundaries in a conversation.
type SenderStatus struct {
	ConversationID string
	Status         wire.MemberStatus
}

// PutBatch is PutMessagesChecked that also returns the cursors and senders'
// boundaries the batch left.
func (s *Store) PutBatch(ctx context.Context, msgs ...wire.Message) (Batch, error) {
	for _, m := range msgs {
		if err := validMessage(m); err != nil {
			return Batch{}, fmt.Errorf("put messages: %w", err)
		}
	}
	var b Batch
	// Not synced: the server sends again what a power cut loses (durability.go).
	err := s.rebuildableTx(ctx, func(tx *sql.Tx) error {
		var err error
		b, err = s.putBatch(ctx, tx, msgs)
		return err
	})
	if err != nil {
		return Batch{}, fmt.Errorf("put messages: %w", err)
	}
	return b, nil
}

// memberStatus reads one member's boundaries in tx; ok is false when the
// conversation has none of theirs.
func memberStatus(ctx context.Context, tx *sql.Tx, conv, user string) (st wire.MemberStatus, ok bool, err error) {
	st.UserID = user
	err = tx.QueryRowContext(ctx, `SELECT last_delivered_seq, last_read_seq FROM member_status
		WHERE conversation_id = ? AND user_id = ?`, conv, user).Scan(&st.LastDeliveredSeq, &st.LastReadSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	return st, err == nil, err
}
