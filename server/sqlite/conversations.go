package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/server"
)

const convColumns = `conversation_id, type, name, last_seq, last_message_body, last_message_sender, last_message_at, created_at, topic`

type scanner interface{ Scan(...any) error }

func scanConv(row scanner) (server.Conversation, error) {
	var c server.Conversation
	var at, created int64
	err := row.Scan(&c.ID, &c.Type, &c.Name, &c.LastSeq, &c.LastMessageBody, &c.LastMessageSender, &at, &created, &c.Topic)
	if errors.Is(err, sql.ErrNoRows) {
		return c, server.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("scan conversation: %w", err)
	}
	c.LastMessageAt, c.CreatedAt = fromNS(at), fromNS(created)
	return c, nil
}

func (s *Store) CreateConversation(ctx context.Context, c server.Conversation, members []server.Participant) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO conversations (conversation_id, type, name, topic, created_at) VALUES (?, ?, ?, ?, ?)`,
			c.ID, c.Type, c.Name, c.Topic, ns(c.CreatedAt))
		if isUnique(err) {
			return server.ErrExists
		}
		if err != nil {
			return fmt.Errorf("insert conversation: %w", err)
		}
		return insertParticipants(tx, c.ID, members)
	})
}

func insertParticipants(tx *sql.Tx, convID string, members []server.Participant) error {
	for _, p := range members {
		_, err := tx.Exec(`INSERT INTO participants (conversation_id, user_id, role, joined_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			convID, p.UserID, p.Role, ns(p.JoinedAt))
		if err != nil {
			return fmt.Errorf("insert participant %s: %w", p.UserID, err)
		}
	}
	return nil
}

func (s *Store) GetConversation(ctx context.Context, id string) (server.Conversation, error) {
	return scanConv(s.r.QueryRowContext(ctx, `SELECT `+convColumns+` FROM conversations WHERE conversation_id = ?`, id))
}

func (s *Store) GetParticipant(ctx context.Context, convID, userID string) (server.Participant, error) {
	p := server.Participant{ConversationID: convID, UserID: userID}
	var joined int64
	err := s.r.QueryRowContext(ctx, `SELECT role, joined_at FROM participants WHERE conversation_id = ? AND user_id = ?`, convID, userID).Scan(&p.Role, &joined)
	if errors.Is(err, sql.ErrNoRows) {
		return p, server.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("get participant: %w", err)
	}
	p.JoinedAt = fromNS(joined)
	return p, nil
}

func (s *Store) ListParticipants(ctx context.Context, convID string) ([]server.Participant, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT user_id, role, joined_at FROM participants WHERE conversation_id = ? ORDER BY user_id`, convID)
	if err != nil {
		return nil, fmt.Errorf("list participants: %w", err)
	}
	defer rows.Close()
	var out []server.Participant
	for rows.Next() {
		p := server.Participant{ConversationID: convID}
		var joined int64
		if err := rows.Scan(&p.UserID, &p.Role, &joined); err != nil {
			return nil, fmt.Errorf("list participants: %w", err)
		}
		p.JoinedAt = fromNS(joined)
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *Store) AddParticipants(ctx context.Context, convID string, members []server.Participant) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var last int64
		if err := tx.QueryRow(`SELECT last_seq FROM conversations WHERE conversation_id = ?`, convID).Scan(&last); errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		} else if err != nil {
			return fmt.Errorf("add participants: %w", err)
		}
		for _, p := range members {
			res, err := tx.Exec(`INSERT INTO participants (conversation_id, user_id, role, joined_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				convID, p.UserID, p.Role, ns(p.JoinedAt))
			if err != nil {
				return fmt.Errorf("insert participant %s: %w", p.UserID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 && last > 0 {
				if err := startBoundaries(tx, convID, p.UserID, last); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *Store) RemoveParticipant(ctx context.Context, convID, userID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM participants WHERE conversation_id = ? AND user_id = ?`, convID, userID)
		if err != nil {
			return fmt.Errorf("remove participant: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return server.ErrNotFound
		}
		_, err = tx.Exec(`DELETE FROM pending_deliveries WHERE receiver_id = ? AND conversation_id = ?`, userID, convID)
		return err
	})
}

var inboxSelect = `SELECT c.conversation_id, c.type, c.name, c.last_seq, c.last_message_body, c.last_message_sender,
	c.last_message_at, c.created_at, COALESCE(st.last_delivered_seq, 0), COALESCE(st.last_read_seq, 0),
	COALESCE(` + mentionSeqsColumn + `, '')
	FROM participants p
	JOIN conversations c ON c.conversation_id = p.conversation_id
	LEFT JOIN message_status st ON st.user_id = p.user_id AND st.conversation_id = p.conversation_id`

func scanInbox(rows *sql.Rows, userID string) (server.InboxEntry, error) {
	var e server.InboxEntry
	var at, created int64
	var mentions string
	err := rows.Scan(&e.Conversation.ID, &e.Conversation.Type, &e.Conversation.Name, &e.Conversation.LastSeq,
		&e.Conversation.LastMessageBody, &e.Conversation.LastMessageSender, &at, &created,
		&e.Status.LastDeliveredSeq, &e.Status.LastReadSeq, &mentions)
	if err != nil {
		return e, fmt.Errorf("scan inbox: %w", err)
	}
	if e.MentionSeqs, err = parseSeqs(mentions); err != nil {
		return e, fmt.Errorf("scan inbox: %w", err)
	}
	e.Conversation.LastMessageAt, e.Conversation.CreatedAt = fromNS(at), fromNS(created)
	e.Status.UserID, e.Status.ConversationID = userID, e.Conversation.ID
	return e, nil
}

func (s *Store) Inbox(ctx context.Context, userID string, limit int) ([]server.InboxEntry, error) {
	rows, err := s.r.QueryContext(ctx, inboxSelect+` WHERE p.user_id = ?
		ORDER BY MAX(c.last_message_at, c.created_at) DESC, c.conversation_id LIMIT ?`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	defer rows.Close()
	var out []server.InboxEntry
	for rows.Next() {
		e, err := scanInbox(rows, userID)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *Store) InboxEntries(ctx context.Context, userID string, convIDs []string) ([]server.InboxEntry, error) {
	if len(convIDs) == 0 {
		return nil, nil
	}
	args := []any{userID}
	for _, id := range convIDs {
		args = append(args, id)
	}
	rows, err := s.r.QueryContext(ctx, inboxSelect+` WHERE p.user_id = ? AND p.conversation_id IN (`+placeholders(len(convIDs))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("inbox entries: %w", err)
	}
	defer rows.Close()
	byID := map[string]server.InboxEntry{}
	for rows.Next() {
		e, err := scanInbox(rows, userID)
		if err != nil {
			return nil, err
		}
		byID[e.Conversation.ID] = e
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]server.InboxEntry, 0, len(byID))
	for _, id := range convIDs {
		if e, ok := byID[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}
