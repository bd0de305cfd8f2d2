package localstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// applyEvent applies a newly cached event to its target's row, if the target
// is cached and the event is newer than what the row shows (updated_seq): the
// same rules as the server's (docs/protocol.md, "Events"). An event that
// arrives before its target (or whose target is not cached) changes nothing:
// the target comes from the server with the event already applied.
func applyEvent(ctx context.Context, tx *sql.Tx, ev wire.Message) error {
	var kind, reactionsJSON string
	var deleted, updated int64
	err := tx.QueryRowContext(ctx, `SELECT kind, deleted, updated_seq, reactions FROM messages WHERE conversation_id = ? AND seq_no = ?`,
		ev.ConversationID, ev.TargetSeq).Scan(&kind, &deleted, &updated, &reactionsJSON)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("event %d: read target: %w", ev.SeqNo, err)
	}
	if kind != "" || deleted != 0 || updated >= ev.SeqNo {
		return nil
	}
	target := []any{ev.ConversationID, ev.TargetSeq}
	switch ev.Kind {
	case wire.KindReaction:
		reactions := decodeReactions(reactionsJSON)
		if ev.Content == "" {
			delete(reactions, ev.SenderID)
		} else {
			if reactions == nil {
				reactions = map[string]string{}
			}
			reactions[ev.SenderID] = ev.Content
		}
		_, err = tx.ExecContext(ctx, `UPDATE messages SET reactions = ?, updated_seq = ? WHERE conversation_id = ? AND seq_no = ?`,
			append([]any{encodeReactions(reactions), ev.SeqNo}, target...)...)
	case wire.KindEdit:
		_, err = tx.ExecContext(ctx, `UPDATE messages SET content = ?, edited = 1, updated_seq = ? WHERE conversation_id = ? AND seq_no = ?`,
			append([]any{ev.Content, ev.SeqNo}, target...)...)
	case wire.KindDelete:
		_, err = tx.ExecContext(ctx, `UPDATE messages SET content = '', attachment = '', attachment_info = '', reactions = '', deleted = 1, updated_seq = ?
			WHERE conversation_id = ? AND seq_no = ?`, append([]any{ev.SeqNo}, target...)...)
		if err == nil { // the old text of its edits goes too
			_, err = tx.ExecContext(ctx, `UPDATE messages SET content = '' WHERE conversation_id = ? AND target_seq = ? AND target_seq > 0 AND kind = 'edit'`, target...)
		}
	default:
		return nil // a kind this version does not know: kept, not applied
	}
	if err != nil {
		return fmt.Errorf("apply %s %d: %w", ev.Kind, ev.SeqNo, err)
	}
	if ev.Kind == wire.KindEdit || ev.Kind == wire.KindDelete {
		if _, err := tx.ExecContext(ctx, `UPDATE inbox SET last_message_body = ? WHERE conversation_id = ? AND last_message_seq = ?`,
			ev.Preview(), ev.ConversationID, ev.TargetSeq); err != nil {
			return fmt.Errorf("apply %s %d to the preview: %w", ev.Kind, ev.SeqNo, err)
		}
	}
	return nil
}

// refreshState takes the state of a message already cached from a copy that
// has seen more events (a page of history fetched later).
func refreshState(ctx context.Context, tx *sql.Tx, m wire.Message) error {
	if m.UpdatedSeq == 0 || m.Kind != "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, attachment = ?, attachment_info = ?, edited = ?, deleted = ?, reactions = ?, updated_seq = ?
		WHERE conversation_id = ? AND seq_no = ? AND updated_seq < ?`,
		m.Content, m.Attachment, encodeAttachmentInfo(m.AttachmentInfo), m.Edited, m.Deleted, encodeReactions(m.Reactions), m.UpdatedSeq,
		m.ConversationID, m.SeqNo, m.UpdatedSeq); err != nil {
		return fmt.Errorf("refresh message %d: %w", m.SeqNo, err)
	}
	return nil
}

// Reactions are kept as a JSON object, user_id → emoji; "" for none. A value
// that does not decode (it never should) reads as none.
func decodeReactions(s string) map[string]string {
	if s == "" {
		return nil
	}
	var r map[string]string
	if json.Unmarshal([]byte(s), &r) != nil {
		return nil
	}
	return r
}

// An attachment's description is kept as JSON; ” for none. A value that
// does not decode (it never should) reads as none.
func decodeAttachmentInfo(s string) *wire.AttachmentInfo {
	if s == "" {
		return nil
	}
	var a wire.AttachmentInfo
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil
	}
	return &a
}

func encodeAttachmentInfo(a *wire.AttachmentInfo) string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(a) // strings and a number always encode
	return string(b)
}

func encodeReactions(r map[string]string) string {
	if len(r) == 0 {
		return ""
	}
	b, _ := json.Marshal(r) // a map of strings always encodes
	return string(b)
}
