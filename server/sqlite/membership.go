package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// afterMembership is afterAppend for a membership event whose row is
// inserted: it applies the change the event records (server/membership_events.go
// has the rules) in the same transaction, moves last_seq, and the preview
// only while the conversation has no message: its line, with no sender (the
// line names who made the change; "alice: alice added carol" would say it
// twice).
func (s *Store) afterMembership(tx *sql.Tx, m server.Message, receivers []string) error {
	res, err := tx.Exec(`UPDATE conversations SET last_seq = ?1, counter = MAX(counter, ?1),
		last_message_body = CASE WHEN last_message_seq = 0 THEN ?3 ELSE last_message_body END,
		last_message_sender = CASE WHEN last_message_seq = 0 THEN '' ELSE last_message_sender END
		WHERE conversation_id = ?2 AND last_seq < ?1`, m.SeqNo, m.ConversationID, m.Preview())
	if err != nil {
		return fmt.Errorf("update conversation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		if err := tx.QueryRow(`SELECT 1 FROM conversations WHERE conversation_id = ?`, m.ConversationID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		} else if err != nil {
			return fmt.Errorf("conversation lookup: %w", err)
		}
		return server.ErrSeqTaken
	}
	for _, u := range m.JoiningSubjects() {
		res, err := tx.Exec(`INSERT INTO participants (conversation_id, user_id, role, joined_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			m.ConversationID, u, wire.RoleMember, ns(m.Timestamp))
		if err != nil {
			return fmt.Errorf("add participant %s: %w", u, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return server.ErrTargetChanged // a member already
		}
		if err := startBoundaries(tx, m.ConversationID, u, m.SeqNo); err != nil {
			return err
		}
	}
	for _, u := range m.LeavingSubjects() {
		if err := leave(tx, m.ConversationID, u); err != nil {
			return err
		}
	}
	switch m.Kind {
	case wire.KindRenamed:
		_, err = tx.Exec(`UPDATE conversations SET name = ? WHERE conversation_id = ?`, m.Content, m.ConversationID)
	case wire.KindTopic:
		_, err = tx.Exec(`UPDATE conversations SET topic = ? WHERE conversation_id = ?`, m.Content, m.ConversationID)
	case wire.KindAdminGranted, wire.KindAdminRevoked:
		role := wire.RoleAdmin
		if m.Kind == wire.KindAdminRevoked {
			role = wire.RoleMember
		}
		for _, u := range m.Subjects() {
			res, err := tx.Exec(`UPDATE participants SET role = ? WHERE conversation_id = ? AND user_id = ?`, role, m.ConversationID, u)
			if err != nil {
				return fmt.Errorf("set role of %s: %w", u, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return server.ErrTargetChanged // not a member (any more)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("apply %s: %w", m.Kind, err)
	}
	// The sender's boundaries stay: they may have just left.
	pending := s.hot("upsertPending")
	for _, r := range receivers {
		if _, err := pending.exec(r, m.ConversationID, m.SeqNo, m.SeqNo); err != nil {
			return fmt.Errorf("pending delivery for %s: %w", r, err)
		}
	}
	return nil
}

// leave ends userID's membership of convID and drops their pending row;
// ErrTargetChanged if they are not a member.
func leave(tx *sql.Tx, convID, userID string) error {
	res, err := tx.Exec(`DELETE FROM participants WHERE conversation_id = ? AND user_id = ?`, convID, userID)
	if err != nil {
		return fmt.Errorf("remove participant %s: %w", userID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return server.ErrTargetChanged
	}
	if _, err := tx.Exec(`DELETE FROM pending_deliveries WHERE receiver_id = ? AND conversation_id = ?`, userID, convID); err != nil {
		return fmt.Errorf("drop pending row of %s: %w", userID, err)
	}
	return nil
}

var _ server.ChannelStore = (*Store)(nil)

// ListChannels reads the channels through their partial index.
func (s *Store) ListChannels(ctx context.Context, after string, limit int) ([]server.Conversation, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+convColumns+` FROM conversations INDEXED BY conversations_channels
		WHERE type = 'channel' AND conversation_id > ? ORDER BY conversation_id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	defer rows.Close()
	var out []server.Conversation
	for rows.Next() {
		c, err := scanConv(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// startBoundaries puts a member who joins at seq (the join's event, or the
// conversation's newest seq_no) at seq for delivery and reading: the history
// before they came is theirs to scroll, not unread news, and the others'
// ticks on it do not fall back to one because a member joined who never got
// it. A member added back keeps what they had if it was higher (it is not:
// they left before seq).
func startBoundaries(tx *sql.Tx, convID, user string, seq int64) error {
	_, err := tx.Exec(`INSERT INTO message_status (user_id, conversation_id, last_delivered_seq, last_read_seq) VALUES (?1, ?2, ?3, ?3)
		ON CONFLICT DO UPDATE SET last_delivered_seq = MAX(last_delivered_seq, excluded.last_delivered_seq),
		last_read_seq = MAX(last_read_seq, excluded.last_read_seq)`, user, convID, seq)
	if err != nil {
		return fmt.Errorf("start boundaries of %s: %w", user, err)
	}
	return nil
}
