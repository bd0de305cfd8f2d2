package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.ColdStore = (*Store)(nil)

// ArchiveDue reads the partial index conversations_archive_due (migration
// 013): only conversations with rows after their watermark are in it, so the
// query reads the conversations due and the few whose first row after the
// watermark is newer than cutoff, never the messages table.
func (s *Store) ArchiveDue(ctx context.Context, cutoff time.Time, limit int) ([]server.ArchiveDue, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT conversation_id, archived_through FROM conversations INDEXED BY conversations_archive_due
		WHERE archived_through < last_seq AND archive_at < ? ORDER BY archive_at LIMIT ?`, ns(cutoff), limit)
	if err != nil {
		return nil, fmt.Errorf("archive due: %w", err)
	}
	defer rows.Close()
	var out []server.ArchiveDue
	for rows.Next() {
		var d server.ArchiveDue
		if err := rows.Scan(&d.ConversationID, &d.ArchivedThrough); err != nil {
			return nil, fmt.Errorf("archive due: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("archive due: %w", err)
	}
	return out, nil
}

// AdvanceArchive needs no condition on last_seq: a conversation whose
// watermark reaches it leaves the partial index by itself, and one that
// received a row meanwhile stays in it at 0, to be looked at again.
func (s *Store) AdvanceArchive(ctx context.Context, convID string, through int64, next time.Time) error {
	at := int64(0)
	if !next.IsZero() {
		at = ns(next)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE conversations SET archived_through = MAX(archived_through, ?), archive_at = ? WHERE conversation_id = ?`,
			through, at, convID)
		if err != nil {
			return fmt.Errorf("advance archive of %s: %w", convID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return server.ErrNotFound
		}
		return nil
	})
}

// MarkArchived applies to a message at the version listed, or an event
// whose content a delete of its target has not cleared.
func (s *Store) MarkArchived(ctx context.Context, m server.Message, ref string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE messages SET content = '', s3_ref = ? WHERE conversation_id = ? AND seq_no = ? AND updated_seq = ? AND deleted = 0 AND content != ''`,
			ref, m.ConversationID, m.SeqNo, m.UpdatedSeq)
		if err != nil {
			return fmt.Errorf("mark archived: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var one int
			if err := tx.QueryRow(`SELECT 1 FROM messages WHERE conversation_id = ? AND seq_no = ?`, m.ConversationID, m.SeqNo).Scan(&one); errors.Is(err, sql.ErrNoRows) {
				return server.ErrNotFound
			}
			return server.ErrTargetChanged
		}
		return nil
	})
}

// EditSeqs reads the events index (messages_by_target).
func (s *Store) EditSeqs(ctx context.Context, convID string, targetSeq int64) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq_no FROM messages INDEXED BY messages_by_target
		WHERE conversation_id = ? AND target_seq = ? AND target_seq > 0 AND kind = 'edit' ORDER BY seq_no`, convID, targetSeq)
	if err != nil {
		return nil, fmt.Errorf("edit seqs: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, fmt.Errorf("edit seqs: %w", err)
		}
		out = append(out, seq)
	}
	return out, rows.Err()
}
