package localstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// ApplyStatus records a member's boundaries. They only move forward, and read
// implies delivered. Our own boundaries also set the inbox's unread
// count. changed reports whether anything moved.
func (s *Store) ApplyStatus(ctx context.Context, conversationID string, st wire.MemberStatus) (changed bool, err error) {
	if err := wire.ValidateConversationID(conversationID); err != nil {
		return false, fmt.Errorf("apply status: %w", err)
	}
	if st.UserID == "" || st.LastDeliveredSeq < 0 || st.LastReadSeq < 0 {
		return false, fmt.Errorf("apply status: %w", wire.Errorf(wire.CodeInvalid, "status needs a user_id and non-negative boundaries"))
	}
	// Not synced (durability.go): a boundary from the server comes again
	// from it, and the user's own read boundary is told to the server, whose
	// inbox gives it back on the next connect; a power cut can at worst show
	// a few messages unread again. No text is in it.
	err = s.rebuildableTx(ctx, func(tx *sql.Tx) error {
		var err error
		changed, err = s.applyStatus(ctx, tx, conversationID, st)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("apply status of %s in %s: %w", st.UserID, conversationID, err)
	}
	return changed, nil
}

// StatusUpdate is one member's boundaries in a conversation, for ApplyStatuses.
type StatusUpdate struct {
	ConversationID string
	Status         wire.MemberStatus
}

// ApplyStatuses applies several status updates in one transaction (status
// frames come in bursts: every member's ack of every message). changed[i]
// reports whether update i moved anything; invalid updates are skipped.
func (s *Store) ApplyStatuses(ctx context.Context, updates ...StatusUpdate) (changed []bool, err error) {
	changed = make([]bool, len(updates))
	// Not synced: boundaries the server pushed come again from it (a
	// conversation opened asks for them, Session.RefreshStatus), see durability.go.
	err = s.rebuildableTx(ctx, func(tx *sql.Tx) error {
		rows := statementContext(ctx) // ctx is checked once a row (rowctx.go)
		for i, u := range updates {
			if err := ctx.Err(); err != nil {
				return err
			}
			if wire.ValidateConversationID(u.ConversationID) != nil || u.Status.UserID == "" ||
				u.Status.LastDeliveredSeq < 0 || u.Status.LastReadSeq < 0 {
				continue
			}
			c, err := s.applyStatus(rows, tx, u.ConversationID, u.Status)
			if err != nil {
				return err
			}
			changed[i] = c
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apply statuses: %w", err)
	}
	return changed, nil
}

// upsertStatus moves a member's boundaries forward only, read implying delivered.
const upsertStatus = `INSERT INTO member_status (conversation_id, user_id, last_delivered_seq, last_read_seq)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (conversation_id, user_id) DO UPDATE SET
			last_delivered_seq = max(member_status.last_delivered_seq, excluded.last_delivered_seq),
			last_read_seq = max(member_status.last_read_seq, excluded.last_read_seq)
		WHERE excluded.last_delivered_seq > member_status.last_delivered_seq
		   OR excluded.last_read_seq > member_status.last_read_seq`

func (s *Store) applyStatus(ctx context.Context, tx *sql.Tx, conv string, st wire.MemberStatus) (bool, error) {
	res, err := tx.ExecContext(ctx, upsertStatus, conv, st.UserID, max(st.LastDeliveredSeq, st.LastReadSeq), st.LastReadSeq)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if n > 0 && st.UserID == s.self {
		if err := moveOwnBoundaries(ctx, tx, conv, st); err != nil {
			return false, err
		}
	}
	return n > 0, nil
}

// moveOwnBoundaries carries the user's own boundaries, once moved, to the inbox row.
func moveOwnBoundaries(ctx context.Context, tx *sql.Tx, conv string, st wire.MemberStatus) error {
	// Read to the end, no gap is left ahead of the boundary. (Read part of the
	// way, the gaps are kept: unread may then count a little low until the
	// next inbox sync, never high.)
	_, err := tx.ExecContext(ctx, `UPDATE inbox SET
		last_delivered_seq = max(last_delivered_seq, ?), last_read_seq = max(last_read_seq, ?),
		gaps = CASE WHEN max(last_read_seq, ?) >= last_seq THEN 0 ELSE gaps END
		WHERE conversation_id = ?`, max(st.LastDeliveredSeq, st.LastReadSeq), st.LastReadSeq, st.LastReadSeq, conv)
	return err
}

// Statuses returns every known member's boundaries in a conversation, by user.
func (s *Store) Statuses(ctx context.Context, conversationID string) ([]wire.MemberStatus, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, last_delivered_seq, last_read_seq FROM member_status
		WHERE conversation_id = ? ORDER BY user_id`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("statuses of %s: %w", conversationID, err)
	}
	defer rows.Close()
	sts := []wire.MemberStatus{}
	for rows.Next() {
		var st wire.MemberStatus
		if err := rows.Scan(&st.UserID, &st.LastDeliveredSeq, &st.LastReadSeq); err != nil {
			return nil, fmt.Errorf("statuses of %s: %w", conversationID, err)
		}
		sts = append(sts, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("statuses of %s: %w", conversationID, err)
	}
	return sts, nil
}

// PeerBoundaries returns the tick boundaries of the conversation's other members:
// the minimum over them, since in a group a message is delivered or read when
// every other member's boundary has passed it. With no other member known both
// are 0.
func (s *Store) PeerBoundaries(ctx context.Context, conversationID string) (delivered, read int64, err error) {
	var d, r sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT min(last_delivered_seq), min(last_read_seq) FROM member_status
		WHERE conversation_id = ? AND user_id <> ?`, conversationID, s.self).Scan(&d, &r)
	if err != nil {
		return 0, 0, fmt.Errorf("peer boundaries of %s: %w", conversationID, err)
	}
	return d.Int64, r.Int64, nil
}

// PutInbox merges inbox entries from the server. Sequence numbers and boundaries
// never move back, so a stale server answer cannot undo what the socket already
// delivered; names and previews follow the newer side.
func (s *Store) PutInbox(ctx context.Context, entries ...wire.InboxEntry) error {
	for _, e := range entries {
		if err := wire.ValidateConversationID(e.ConversationID); err != nil {
			return fmt.Errorf("put inbox: %w", err)
		}
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, e := range entries {
			typ, peer := s.conversationShape(e.ConversationID)
			if e.Type != "" {
				typ = e.Type
			}
			if e.Peer != "" {
				peer = e.Peer
			}
			if err := upsertInbox(ctx, tx, e.ConversationID, typ, e.Name, peer, e.LastSeq, e.LastMessageBody, e.LastMessageSender, nanos(e.LastMessageAt)); err != nil {
				return err
			}
			if _, err := s.applyStatus(ctx, tx, e.ConversationID, wire.MemberStatus{
				UserID: s.self, LastDeliveredSeq: e.LastDeliveredSeq, LastReadSeq: e.LastReadSeq,
			}); err != nil {
				return err
			}
			// The server counts unread messages; what its count leaves out of the
			// seq range are gaps. Taken only when the cached range is the one it
			// counted (a live message may already have moved last_seq on), and
			// not from a capped count.
			if e.Unread < wire.MaxUnread {
				if _, err := tx.ExecContext(ctx, `UPDATE inbox SET gaps = ?
					WHERE conversation_id = ? AND last_seq = ? AND last_read_seq = ?`,
					max(0, e.LastSeq-e.LastReadSeq-e.Unread), e.ConversationID, e.LastSeq, e.LastReadSeq); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put inbox: %w", err)
	}
	return nil
}

// The server lists a conversation, or sends it, only to a member: newer than
// the user's leaving (left_seq), it is theirs again.
func upsertInbox(ctx context.Context, tx *sql.Tx, conv, typ, name, peer string, lastSeq int64, body, sender string, at int64) error {
	// In an UPDATE's SET clause every column reference is the old value, so the
	// CASEs compare against the row as it was.
	_, err := tx.ExecContext(ctx, `INSERT INTO inbox
		(conversation_id, type, name, peer, last_seq, last_message_body, last_message_sender, last_message_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (conversation_id) DO UPDATE SET
			type = excluded.type,
			name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE inbox.name END,
			peer = CASE WHEN excluded.peer <> '' THEN excluded.peer ELSE inbox.peer END,
			last_seq = max(inbox.last_seq, excluded.last_seq),
			last_message_body = CASE WHEN excluded.last_seq > inbox.last_seq THEN excluded.last_message_body ELSE inbox.last_message_body END,
			last_message_sender = CASE WHEN excluded.last_seq > inbox.last_seq THEN excluded.last_message_sender ELSE inbox.last_message_sender END,
			last_message_at = CASE WHEN excluded.last_seq > inbox.last_seq OR inbox.last_message_at = 0 THEN excluded.last_message_at ELSE inbox.last_message_at END,
			left_seq = CASE WHEN excluded.last_seq > inbox.left_seq THEN 0 ELSE inbox.left_seq END`,
		conv, typ, name, peer, lastSeq, body, sender, at)
	return err
}

// PutConversation records a conversation's metadata (a conversation frame, or an
// API answer) and seeds its participants' boundaries so group ticks take every
// member into account.
func (s *Store) PutConversation(ctx context.Context, c wire.Conversation) error {
	if err := wire.ValidateConversationID(c.ConversationID); err != nil {
		return fmt.Errorf("put conversation: %w", err)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		typ, peer := s.conversationShape(c.ConversationID)
		if c.Type != "" {
			typ = c.Type
		}
		at := c.LastMessageAt
		if at.IsZero() {
			at = c.CreatedAt // a new conversation sorts by when it was made
		}
		if err := upsertInbox(ctx, tx, c.ConversationID, typ, c.Name, peer, c.LastSeq, c.LastMessageBody, c.LastMessageSender, nanos(at)); err != nil {
			return err
		}
		for _, p := range c.Participants {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO member_status (conversation_id, user_id) VALUES (?, ?)`,
				c.ConversationID, p.UserID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put conversation %s: %w", c.ConversationID, err)
	}
	return nil
}

// RemoveMember forgets a member's boundaries (they left the group), so they no
// longer hold back its ticks.
func (s *Store) RemoveMember(ctx context.Context, conversationID, userID string) error {
	_, err := s.exec(ctx, `DELETE FROM member_status WHERE conversation_id = ? AND user_id = ?`, conversationID, userID)
	if err != nil {
		return fmt.Errorf("remove %s from %s: %w", userID, conversationID, err)
	}
	return nil
}

const inboxColumns = `conversation_id, type, name, peer, last_seq, last_message_body, last_message_sender,
	last_message_at, last_delivered_seq, last_read_seq, gaps, ` + unreadMentionsColumn

func scanInbox(rows *sql.Rows) ([]wire.InboxEntry, error) {
	defer rows.Close()
	es := []wire.InboxEntry{}
	for rows.Next() {
		var e wire.InboxEntry
		var at, gaps int64
		if err := rows.Scan(&e.ConversationID, &e.Type, &e.Name, &e.Peer, &e.LastSeq, &e.LastMessageBody,
			&e.LastMessageSender, &at, &e.LastDeliveredSeq, &e.LastReadSeq, &gaps, &e.Mentions); err != nil {
			return nil, err
		}
		e.LastMessageAt = fromNanos(at)
		e.Unread = min(max(0, e.LastSeq-e.LastReadSeq-gaps), wire.MaxUnread)
		es = append(es, e)
	}
	return es, rows.Err()
}

// Inbox returns up to limit conversations (0: all), most recent activity first,
// with unread counts from our own read boundary; not those the user has left
// (left.go).
func (s *Store) Inbox(ctx context.Context, limit int) ([]wire.InboxEntry, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+inboxColumns+` FROM inbox WHERE left_seq = 0
		ORDER BY last_message_at DESC, conversation_id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("cached inbox: %w", err)
	}
	es, err := scanInbox(rows)
	if err != nil {
		return nil, fmt.Errorf("cached inbox: %w", err)
	}
	return es, nil
}

// InboxEntry returns one conversation's inbox entry, or ErrNotFound.
func (s *Store) InboxEntry(ctx context.Context, conversationID string) (wire.InboxEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+inboxColumns+` FROM inbox WHERE conversation_id = ?`, conversationID)
	if err != nil {
		return wire.InboxEntry{}, fmt.Errorf("cached inbox entry %s: %w", conversationID, err)
	}
	es, err := scanInbox(rows)
	if err != nil {
		return wire.InboxEntry{}, fmt.Errorf("cached inbox entry %s: %w", conversationID, err)
	}
	if len(es) == 0 {
		return wire.InboxEntry{}, fmt.Errorf("cached inbox entry %s: %w", conversationID, ErrNotFound)
	}
	return es[0], nil
}
