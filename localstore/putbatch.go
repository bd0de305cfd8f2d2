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
	// Senders holds, for each sender of an added message, their boundaries
	// in its conversation after the commit (MemberStatus would read the same).
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

// applySenderStatus counts a sender as having read up to their message (a
// reply implies read) and returns their boundaries as they now stand, read
// in the transaction. (Not through the upsert's RETURNING: resetting that
// statement cost ~90 µs, BenchmarkReceiveCommit's profile.)
func (s *Store) applySenderStatus(ctx context.Context, tx *sql.Tx, conv, user string, seq int64) (wire.MemberStatus, error) {
	st := wire.MemberStatus{UserID: user}
	if _, err := s.applyStatus(ctx, tx, conv, wire.MemberStatus{UserID: user, LastDeliveredSeq: seq, LastReadSeq: seq}); err != nil {
		return st, err
	}
	err := tx.QueryRowContext(ctx, `SELECT last_delivered_seq, last_read_seq FROM member_status
		WHERE conversation_id = ? AND user_id = ?`, conv, user).Scan(&st.LastDeliveredSeq, &st.LastReadSeq)
	if errors.Is(err, sql.ErrNoRows) {
		// The upsert writes a row or finds one at least as far: never here.
		return st, fmt.Errorf("status of %s in %s: %w", user, conv, ErrNotFound)
	}
	return st, err
}
