package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// A message's mentions are kept comma-separated: user ids and @all/@here hold
// no comma (wire.ValidateUserID).
func encodeMentions(names []string) string { return strings.Join(names, ",") }

func decodeMentions(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// insertMentions gives each member m mentions a mentions row, in the write
// that inserts m: the count the inbox reads is then never behind the message.
func (s *Store) insertMentions(m server.Message) error {
	for _, name := range m.Mentions {
		var err error
		if name == wire.MentionAll || name == wire.MentionHere {
			_, err = s.hot("insertMentionAll").exec(m.ConversationID, m.SenderID, m.SeqNo)
		} else {
			_, err = s.hot("insertMention").exec(name, m.ConversationID, m.SeqNo)
		}
		if err != nil {
			return fmt.Errorf("mention of %s: %w", name, err)
		}
	}
	return nil
}

// mentionSeqsColumn is the inbox's column of a member's mention seq_nos (the
// newest wire.MaxUnread, comma-separated), read with the entry.
var mentionSeqsColumn = `(SELECT group_concat(seq_no) FROM (SELECT seq_no FROM mentions mn
	WHERE mn.user_id = p.user_id AND mn.conversation_id = p.conversation_id
	ORDER BY seq_no DESC LIMIT ` + strconv.Itoa(wire.MaxUnread) + `))`

// parseSeqs reads mentionSeqsColumn into ascending seq_nos.
func parseSeqs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mention seq_no %q: %w", p, err)
		}
		out[i] = n
	}
	slices.Sort(out) // group_concat promises no order
	return out, nil
}

func (s *Store) MentionAllAdminsOnly(ctx context.Context, convID string) (bool, error) {
	var on int
	err := s.r.QueryRowContext(ctx, `SELECT all_admins_only FROM mention_settings WHERE conversation_id = ?`, convID).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mention setting: %w", err)
	}
	return on != 0, nil
}

func (s *Store) SetMentionAllAdminsOnly(ctx context.Context, convID string, adminsOnly bool) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRow(`SELECT 1 FROM conversations WHERE conversation_id = ?`, convID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		} else if err != nil {
			return fmt.Errorf("conversation lookup: %w", err)
		}
		_, err := tx.Exec(`INSERT INTO mention_settings (conversation_id, all_admins_only) VALUES (?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET all_admins_only = excluded.all_admins_only`, convID, adminsOnly)
		if err != nil {
			return fmt.Errorf("set mention setting: %w", err)
		}
		return nil
	})
}
