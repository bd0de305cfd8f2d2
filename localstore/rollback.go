package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/chatterm/chat/wire"
)

// A server restored from a backup, or whose store was rolled back, no longer
// has what was stored after that point, and numbers new messages from there
// again: the cache may hold messages the server lost, under seq_nos the
// server now gives to others. The session compares the cache with the server
// (client/reconcile.go) and applies what it found here, one conversation per
// transaction, so the cache never holds two messages under one number and its
// cursor, boundaries and preview never stand above what the server has.

// StoreID returns the server store identity the cache was last reconciled
// with; "" when none was recorded yet.
func (s *Store) StoreID(ctx context.Context) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'store_id'`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cached store id: %w", err)
	}
	return id, nil
}

// SetStoreID records the server store identity the cache is now in step with.
func (s *Store) SetStoreID(ctx context.Context, id string) error {
	_, err := s.exec(ctx, `INSERT INTO meta (key, value) VALUES ('store_id', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, id)
	if err != nil {
		return fmt.Errorf("record the store id: %w", err)
	}
	return nil
}

// CachedConversations lists the conversations the cache holds messages or a
// cursor of.
func (s *Store) CachedConversations(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id FROM cursors
		UNION SELECT DISTINCT conversation_id FROM messages ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("cached conversations: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("cached conversations: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Rollback is what comparing a conversation's cache with the server found.
type Rollback struct {
	ConversationID string
	// Last is the server's newest seq_no in the conversation (0: it has no
	// message): every cached message above it is gone from the server.
	Last int64
	// Drop lists the cached seq_nos at or below Last that the server holds
	// no message under, or another message (another message_id).
	Drop []int64
	// Current are messages as the server has them now. A cached message
	// with the same seq_no and message_id takes their state (content,
	// reactions, edited, deleted): events the server lost are undone.
	Current []wire.Message
}

// RollbackResult says what ApplyRollback changed.
type RollbackResult struct {
	// Dropped are the cached messages and events removed, by seq_no.
	Dropped []wire.Message
	// Requeued are this account's own messages among them, put back in the
	// outbox (ahead of what it held) to be sent again: the server had
	// acknowledged them, then lost them.
	Requeued []OutboxEntry
	// Kept is the seq_no up to which the cache still holds what the server
	// has: the cursor, and every member's boundaries, are no higher now.
	Kept int64
}

// ApplyRollback brings one conversation's cache back to what the server has,
// in one transaction: it removes the messages rb names (and their search
// entries), lowers the cursor, every cached member boundary and the inbox row
// to the highest seq_no still in step, undoes lost events on the messages
// kept, and puts the account's own lost messages (not events, not deleted
// ones) back in the outbox under their message_id. A reply whose quoted
// message was lost is requeued as a plain message. Sending again with the
// same message_id is safe: a server that still has the message answers with
// it and stores nothing.
func (s *Store) ApplyRollback(ctx context.Context, rb Rollback) (RollbackResult, error) {
	if err := wire.ValidateConversationID(rb.ConversationID); err != nil {
		return RollbackResult{}, fmt.Errorf("roll back: %w", err)
	}
	if rb.Last < 0 {
		return RollbackResult{}, fmt.Errorf("roll back %s: %w", rb.ConversationID, wire.Errorf(wire.CodeInvalid, "last seq_no must not be negative"))
	}
	var res RollbackResult
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = s.applyRollback(ctx, tx, rb)
		return err
	})
	if err != nil {
		return RollbackResult{}, fmt.Errorf("roll back %s: %w", rb.ConversationID, err)
	}
	return res, nil
}

func (s *Store) applyRollback(ctx context.Context, tx *sql.Tx, rb Rollback) (RollbackResult, error) {
	conv := rb.ConversationID
	var res RollbackResult
	args := []any{conv, rb.Last}
	in := ""
	if len(rb.Drop) > 0 {
		in = " OR seq_no IN (" + strings.TrimSuffix(strings.Repeat("?,", len(rb.Drop)), ",") + ")"
		for _, seq := range rb.Drop {
			args = append(args, seq)
		}
	}
	where := `conversation_id = ? AND (seq_no > ?` + in + `)`
	rows, err := tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE `+where+` ORDER BY seq_no`, args...)
	if err != nil {
		return res, err
	}
	if res.Dropped, err = scanMessages(rows); err != nil {
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE `+where, args...); err != nil {
		return res, err
	}
	res.Kept = rb.Last
	if len(res.Dropped) > 0 {
		res.Kept = min(rb.Last, res.Dropped[0].SeqNo-1)
	}
	keep := res.Kept

	// Nothing above keep is known to be in step: the cursor goes back to it
	// (a sync then fetches what the server has after it), and no boundary may
	// stay above it, or the new messages there would look delivered or read.
	if _, err := tx.ExecContext(ctx, `UPDATE cursors SET seq_no = ? WHERE conversation_id = ? AND seq_no > ?`, keep, conv, keep); err != nil {
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE member_status SET last_delivered_seq = min(last_delivered_seq, ?1), last_read_seq = min(last_read_seq, ?1)
		WHERE conversation_id = ?2 AND (last_delivered_seq > ?1 OR last_read_seq > ?1)`, keep, conv); err != nil {
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE inbox SET last_seq = min(last_seq, ?1), last_delivered_seq = min(last_delivered_seq, ?1),
		last_read_seq = min(last_read_seq, ?1), gaps = 0
		WHERE conversation_id = ?2 AND (last_seq > ?1 OR last_delivered_seq > ?1 OR last_read_seq > ?1)`, keep, conv); err != nil {
		return res, err
	}
	// The preview showed a message that is gone: the newest kept one shows
	// instead (the inbox refresh after the connect brings the server's).
	var shown int64
	err = tx.QueryRowContext(ctx, `SELECT last_message_seq FROM inbox WHERE conversation_id = ?`, conv).Scan(&shown)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return res, err
	}
	if err == nil && shown > keep {
		prev, err := scanOne(tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
			WHERE conversation_id = ? AND kind = '' ORDER BY seq_no DESC LIMIT 1`, conv))
		switch {
		case errors.Is(err, ErrNotFound):
			_, err = tx.ExecContext(ctx, `UPDATE inbox SET last_message_seq = 0, last_message_body = '', last_message_sender = ''
				WHERE conversation_id = ?`, conv)
		case err == nil:
			_, err = tx.ExecContext(ctx, `UPDATE inbox SET last_message_seq = ?, last_message_body = ?, last_message_sender = ?, last_message_at = ?
				WHERE conversation_id = ?`, prev.SeqNo, prev.Preview(), prev.SenderID, nanos(prev.Timestamp), conv)
		}
		if err != nil {
			return res, err
		}
	}

	if err := resetState(ctx, tx, conv, rb.Current); err != nil {
		return res, err
	}

	// The account's own lost messages go back to the outbox, in the order
	// they were stored and ahead of anything typed since (typed later).
	var mine []wire.Message
	for _, m := range res.Dropped {
		if m.SenderID == s.self && m.Kind == "" && !m.Deleted {
			mine = append(mine, m)
		}
	}
	if len(mine) == 0 {
		return res, nil
	}
	var first sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(id) FROM outbox`).Scan(&first); err != nil {
		return res, err
	}
	next := int64(1)
	if first.Valid {
		next = first.Int64 - int64(len(mine))
	}
	for _, m := range mine {
		if _, err := outboxEntry(ctx, tx, m.MessageID); err == nil {
			continue // already queued again (another process reconciled first)
		} else if !errors.Is(err, ErrNotFound) {
			return res, err
		}
		e := OutboxEntry{MessageID: m.MessageID, ConversationID: conv, Content: m.Content, Attachment: m.Attachment,
			AttachmentInfo: m.AttachmentInfo, ReplyTo: m.ReplyTo, CreatedAt: m.Timestamp}
		if e.ReplyTo > keep {
			e.ReplyTo = 0 // what it quoted is lost too, or another message now
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, message_id, conversation_id, content, attachment, attachment_info, reply_to, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			next, e.MessageID, e.ConversationID, e.Content, e.Attachment, encodeAttachmentInfo(e.AttachmentInfo), e.ReplyTo, nanos(e.CreatedAt)); err != nil {
			return res, err
		}
		next++
		res.Requeued = append(res.Requeued, e)
	}
	return res, nil
}

// ResetState gives cached messages the state the server's copies have
// (content, reactions, edited, deleted), whichever is newer: after a rollback
// the cache may show events the server lost. Messages cached under another
// message_id, and events, are left alone.
func (s *Store) ResetState(ctx context.Context, conversationID string, msgs ...wire.Message) error {
	err := s.tx(ctx, func(tx *sql.Tx) error { return resetState(ctx, tx, conversationID, msgs) })
	if err != nil {
		return fmt.Errorf("reset messages of %s: %w", conversationID, err)
	}
	return nil
}

func resetState(ctx context.Context, tx *sql.Tx, conv string, msgs []wire.Message) error {
	for _, m := range msgs {
		if m.ConversationID != conv || m.Kind != "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, attachment = ?, attachment_info = ?, edited = ?, deleted = ?, reactions = ?, updated_seq = ?
			WHERE conversation_id = ? AND seq_no = ? AND message_id = ?`,
			m.Content, m.Attachment, encodeAttachmentInfo(m.AttachmentInfo), m.Edited, m.Deleted, encodeReactions(m.Reactions), m.UpdatedSeq,
			conv, m.SeqNo, m.MessageID); err != nil {
			return err
		}
	}
	return nil
}
