package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// afterEvent is afterAppend for an event whose row is inserted: it applies
// the event to its target's row (Store.AppendMessage has the rules), moves
// last_seq, and the preview when the event edits or deletes the message it
// shows. Events are rare, so plain statements do, not the prepared hot ones.
func (s *Store) afterEvent(tx *sql.Tx, m server.Message, receivers []string) error {
	if wire.IsMembershipKind(m.Kind) {
		return s.afterMembership(tx, m, receivers)
	}
	n, err := s.hot("updateConvEvent").exec(m.SeqNo, m.ConversationID)
	if err != nil {
		return fmt.Errorf("update conversation: %w", err)
	}
	if n == 0 {
		var one int
		if err := s.hot("convExists").scanRow([]any{m.ConversationID}, &one); errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		} else if err != nil {
			return fmt.Errorf("conversation lookup: %w", err)
		}
		return server.ErrSeqTaken
	}
	var (
		kind, ref        string
		deleted, updated int64
		reactionsJSON    string
	)
	err = tx.QueryRow(`SELECT kind, deleted, updated_seq, reactions, s3_ref FROM messages WHERE conversation_id = ? AND seq_no = ?`,
		m.ConversationID, m.TargetSeq).Scan(&kind, &deleted, &updated, &reactionsJSON, &ref)
	moved := m.Kind != wire.KindReaction && ref != m.BaseRef // archived (or brought back) since the Service looked
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (kind != "" || deleted != 0 || updated != m.BaseSeq || moved)) {
		return server.ErrTargetChanged
	}
	if err != nil {
		return fmt.Errorf("read event target: %w", err)
	}
	target := []any{m.ConversationID, m.TargetSeq}
	switch m.Kind {
	case wire.KindReaction:
		reactions, err := decodeReactions(reactionsJSON)
		if err != nil {
			return err
		}
		if m.Content == "" {
			delete(reactions, m.SenderID)
		} else {
			if reactions == nil {
				reactions = map[string]string{}
			}
			reactions[m.SenderID] = m.Content
		}
		_, err = tx.Exec(`UPDATE messages SET reactions = ?, updated_seq = ? WHERE conversation_id = ? AND seq_no = ?`,
			append([]any{encodeReactions(reactions), m.SeqNo}, target...)...)
		if err != nil {
			return fmt.Errorf("apply reaction: %w", err)
		}
	case wire.KindEdit:
		if _, err := tx.Exec(`UPDATE messages SET content = ?, edited = 1, s3_ref = '', updated_seq = ? WHERE conversation_id = ? AND seq_no = ?`,
			append([]any{m.Content, m.SeqNo}, target...)...); err != nil {
			return fmt.Errorf("apply edit: %w", err)
		}
	case wire.KindDelete:
		if _, err := tx.Exec(`UPDATE messages SET content = '', attachment = '', attachment_info = '', s3_ref = '', reactions = '', deleted = 1, updated_seq = ?
			WHERE conversation_id = ? AND seq_no = ?`, append([]any{m.SeqNo}, target...)...); err != nil {
			return fmt.Errorf("apply delete: %w", err)
		}
		// The text of earlier edits is the message's text too.
		if _, err := tx.Exec(`UPDATE messages INDEXED BY messages_by_target SET content = '', s3_ref = ''
			WHERE conversation_id = ? AND target_seq = ? AND target_seq > 0 AND kind = 'edit'`, target...); err != nil {
			return fmt.Errorf("clear edits of a deleted message: %w", err)
		}
	default:
		return fmt.Errorf("append: unknown event kind %q", m.Kind)
	}
	if m.Kind == wire.KindEdit || m.Kind == wire.KindDelete {
		if _, err := tx.Exec(`UPDATE conversations SET last_message_body = ? WHERE conversation_id = ? AND last_message_seq = ?`,
			m.Preview(), m.ConversationID, m.TargetSeq); err != nil {
			return fmt.Errorf("update preview: %w", err)
		}
	}
	return s.senderAndPending(m, m, receivers)
}
