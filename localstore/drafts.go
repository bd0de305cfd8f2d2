package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// Drafts and input history live in the cache rather than in a file beside
// muted.json: a draft is written each time the person leaves a chat, and
// SQLite gives each write atomically, with the TUI and the chat commands
// sharing the file safely; a JSON file would be rewritten whole, and two
// processes writing it would lose each other's changes.

// MaxInputHistory bounds the texts kept per conversation for recall.
const MaxInputHistory = 100

// Drafts returns the unsent text of every conversation that has some.
func (s *Store) Drafts(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id, text FROM drafts`)
	if err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	defer rows.Close()
	drafts := map[string]string{}
	for rows.Next() {
		var conv, text string
		if err := rows.Scan(&conv, &text); err != nil {
			return nil, fmt.Errorf("drafts: %w", err)
		}
		drafts[conv] = text
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	return drafts, nil
}

// SetDrafts stores each conversation's unsent text, in one transaction; an
// empty text removes the draft (sent, or cleared).
func (s *Store) SetDrafts(ctx context.Context, drafts map[string]string) error {
	for conv := range drafts {
		if err := wire.ValidateConversationID(conv); err != nil {
			return fmt.Errorf("save drafts: %w", err)
		}
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for conv, text := range drafts {
			var err error
			if text == "" {
				_, err = tx.ExecContext(ctx, `DELETE FROM drafts WHERE conversation_id = ?`, conv)
			} else {
				_, err = tx.ExecContext(ctx, `INSERT INTO drafts (conversation_id, text) VALUES (?, ?)
					ON CONFLICT (conversation_id) DO UPDATE SET text = excluded.text`, conv, text)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save drafts: %w", err)
	}
	return nil
}

// InputHistory returns, by conversation, the texts sent from this device,
// oldest first, at most MaxInputHistory each.
func (s *Store) InputHistory(ctx context.Context) (map[string][]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id, text FROM input_history ORDER BY conversation_id, n`)
	if err != nil {
		return nil, fmt.Errorf("input history: %w", err)
	}
	defer rows.Close()
	hist := map[string][]string{}
	for rows.Next() {
		var conv, text string
		if err := rows.Scan(&conv, &text); err != nil {
			return nil, fmt.Errorf("input history: %w", err)
		}
		hist[conv] = append(hist[conv], text)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("input history: %w", err)
	}
	return hist, nil
}

// AddInput records a text sent in a conversation for recall, and removes
// the conversation's draft in the same transaction (what was sent is no
// longer a draft). A text equal to the newest one is not added twice, as
// shells keep their history; past MaxInputHistory the oldest go.
func (s *Store) AddInput(ctx context.Context, conversationID, text string) error {
	if err := wire.ValidateConversationID(conversationID); err != nil {
		return fmt.Errorf("add input: %w", err)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE conversation_id = ?`, conversationID); err != nil {
			return err
		}
		var last sql.NullString
		var n int64
		err := tx.QueryRowContext(ctx, `SELECT text, n FROM input_history WHERE conversation_id = ? ORDER BY n DESC LIMIT 1`,
			conversationID).Scan(&last, &n)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if last.Valid && last.String == text {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO input_history (conversation_id, n, text) VALUES (?, ?, ?)`,
			conversationID, n+1, text); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM input_history WHERE conversation_id = ? AND n <= ?`,
			conversationID, n+1-MaxInputHistory)
		return err
	})
	if err != nil {
		return fmt.Errorf("add input to %s: %w", conversationID, err)
	}
	return nil
}
