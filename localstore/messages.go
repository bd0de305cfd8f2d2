package localstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/chatterm/chat/wire"
)

// PutMessages stores messages, ignoring any already cached (same conversation_id
// and seq_no): delivery is at-least-once and this is where duplicates end. It
// returns the messages that were new, in the order given. In the same
// transaction it moves each conversation's inbox preview and sync cursor, and
// counts each sender as having read up to its own message (a reply implies read).
// Either every message is stored or none is.
func (s *Store) PutMessages(ctx context.Context, msgs ...wire.Message) ([]wire.Message, error) {
	added, _, err := s.PutMessagesChecked(ctx, msgs...)
	return added, err
}

// PutMessagesChecked is PutMessages that also returns the conflicts: messages
// whose seq_no the cache holds under another message_id. Such a message is
// not stored (the cache never holds two messages under one number), and
// means the server's store was rolled back under this cache: the caller
// reconciles the conversation (ApplyRollback) and fetches it again.
func (s *Store) PutMessagesChecked(ctx context.Context, msgs ...wire.Message) (added, conflicts []wire.Message, err error) {
	b, err := s.PutBatch(ctx, msgs...)
	return b.Added, b.Conflicts, err
}

func (s *Store) putMessages(ctx context.Context, tx *sql.Tx, msgs []wire.Message) ([]wire.Message, error) {
	b, err := s.putBatch(ctx, tx, msgs)
	return b.Added, err
}

const insertMessage = `INSERT OR IGNORE INTO messages
	(conversation_id, seq_no, message_id, sender_id, content, attachment, timestamp,
	kind, target_seq, reply_to, edited, deleted, reactions, updated_seq, attachment_info, mentions, mentions_me)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *Store) putBatch(ctx context.Context, tx *sql.Tx, msgs []wire.Message) (Batch, error) {
	type senderKey struct{ conv, user string }
	var added, conflicts, events []wire.Message
	held := map[string][]int64{}        // per conversation, the seq_nos of the batch: each has a row now
	lowest := map[string]int64{}        // per conversation, the lowest new seq_no
	top := map[string]int64{}           // per conversation, the highest new seq_no
	newest := map[string]wire.Message{} // per conversation, the newest new message (not event)
	senders := map[senderKey]int64{}    // per sender, their newest new message
	live := ctx
	ctx = statementContext(ctx) // live is checked once a row (rowctx.go)
	for _, m := range msgs {
		if err := live.Err(); err != nil {
			return Batch{}, err
		}
		held[m.ConversationID] = append(held[m.ConversationID], m.SeqNo)
		// Through the connection's statement cache, compiled once (Open).
		res, err := tx.ExecContext(ctx, insertMessage, m.ConversationID, m.SeqNo, m.MessageID, m.SenderID, cachedContent(m), m.Attachment, nanos(m.Timestamp),
			m.Kind, m.TargetSeq, m.ReplyTo, m.Edited, m.Deleted, encodeReactions(m.Reactions), m.UpdatedSeq, encodeAttachmentInfo(m.AttachmentInfo),
			strings.Join(m.Mentions, ","), wire.MentionsUser(m.Mentions, m.SenderID, s.self))
		if err != nil {
			return Batch{}, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var cachedID string
			if err := tx.QueryRowContext(ctx, `SELECT message_id FROM messages WHERE conversation_id = ? AND seq_no = ?`,
				m.ConversationID, m.SeqNo).Scan(&cachedID); err != nil {
				return Batch{}, err
			}
			if cachedID != m.MessageID {
				conflicts = append(conflicts, m)
				continue
			}
			// Cached already: a page fetched later may show it as later events left it.
			if err := refreshState(ctx, tx, m); err != nil {
				return Batch{}, err
			}
			continue
		}
		added = append(added, m)
		lowest[m.ConversationID] = min(m.SeqNo, cmp.Or(lowest[m.ConversationID], m.SeqNo))
		top[m.ConversationID] = max(top[m.ConversationID], m.SeqNo)
		if m.Kind != "" {
			events = append(events, m)
		} else if n, ok := newest[m.ConversationID]; !ok || m.SeqNo > n.SeqNo {
			newest[m.ConversationID] = m
		}
		k := senderKey{m.ConversationID, m.SenderID}
		senders[k] = max(senders[k], m.SeqNo)
	}
	if err := s.queueForSearch(ctx, tx, added); err != nil {
		return Batch{}, err
	}
	// The rest is per conversation, not per message: one preview (the newest),
	// one boundary per sender (the highest), one cursor walk.
	// What the inbox row covered before: an event at or below its last_seq is
	// counted already (the server's unread count leaves events out, and the
	// gaps taken from it count them).
	covered := map[string]int64{}
	for _, ev := range events {
		if _, ok := covered[ev.ConversationID]; ok {
			continue
		}
		var last int64
		err := tx.QueryRowContext(ctx, `SELECT last_seq FROM inbox WHERE conversation_id = ?`, ev.ConversationID).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Batch{}, err
		}
		covered[ev.ConversationID] = last
	}
	// Only members get a message newer than the row: one after the user left
	// means they are back (left.go); their own leaving below marks it again.
	for conv, seq := range top {
		typ, peer := s.conversationShape(conv)
		if _, err := tx.ExecContext(ctx, `INSERT INTO inbox (conversation_id, type, peer, last_seq) VALUES (?, ?, ?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET last_seq = excluded.last_seq, left_seq = 0 WHERE excluded.last_seq > inbox.last_seq`,
			conv, typ, peer, seq); err != nil {
			return Batch{}, err
		}
	}
	for conv, m := range newest {
		if _, err := tx.ExecContext(ctx, `UPDATE inbox SET last_message_seq = ?, last_message_body = ?,
			last_message_sender = ?, last_message_at = ? WHERE conversation_id = ? AND last_message_seq < ?`,
			m.SeqNo, m.Preview(), m.SenderID, nanos(m.Timestamp), conv, m.SeqNo); err != nil {
			return Batch{}, err
		}
	}
	for _, ev := range events {
		if err := applyEvent(ctx, tx, ev); err != nil {
			return Batch{}, err
		}
	}
	for k, seq := range senders {
		if _, err := s.applyStatus(ctx, tx, k.conv, wire.MemberStatus{UserID: k.user, LastDeliveredSeq: seq, LastReadSeq: seq}); err != nil {
			return Batch{}, err
		}
	}
	// After the senders' boundaries: one who left is no member any more.
	for _, ev := range events {
		if wire.IsMembershipKind(ev.Kind) && ev.SeqNo > covered[ev.ConversationID] {
			if err := applyMembership(ctx, tx, s.self, ev); err != nil {
				return Batch{}, err
			}
		}
	}
	// An event's seq_no holds no message: past our read boundary (as our own
	// sends above have moved it) and past what the row covered, it is a new
	// gap, so unread counts messages, as the server's count does.
	for _, ev := range events {
		if ev.SeqNo <= covered[ev.ConversationID] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE inbox SET gaps = gaps + 1 WHERE conversation_id = ? AND last_read_seq < ?`,
			ev.ConversationID, ev.SeqNo); err != nil {
			return Batch{}, err
		}
	}
	// The senders' boundaries as they now stand, after the membership events
	// (one who left has none).
	senderStatuses := make([]SenderStatus, 0, len(senders))
	for k := range senders {
		st, ok, err := memberStatus(ctx, tx, k.conv, k.user)
		if err != nil {
			return Batch{}, err
		}
		if ok {
			senderStatuses = append(senderStatuses, SenderStatus{ConversationID: k.conv, Status: st})
		}
	}
	cursors := make(map[string]int64, len(held))
	for conv, low := range lowest {
		slices.Sort(held[conv])
		cur, err := advanceCursor(ctx, tx, conv, low-1, held[conv])
		if err != nil {
			return Batch{}, err
		}
		cursors[conv] = cur
	}
	// Nothing new in them: their cursor as it stands, read here rather than
	// after the commit on a connection taken again.
	for conv := range held {
		if _, ok := cursors[conv]; ok {
			continue
		}
		var cur int64
		err := tx.QueryRowContext(ctx, `SELECT seq_no FROM cursors WHERE conversation_id = ?`, conv).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return Batch{}, err
		}
		cursors[conv] = cur
	}
	return Batch{Added: added, Conflicts: conflicts, Cursors: cursors, Senders: senderStatuses}, nil
}

// advanceCursor moves the conversation's cursor over every contiguous cached
// message after it, and returns where it stands. A conversation without a
// cursor starts at floor: the device holds messages from the first one it
// saw, and older ones are history. held (sorted) are seq_nos known to have a
// row: the run through them is walked here rather than row by row in SQL, so
// a batch that continues the cursor costs a probe past its end, not a scan of
// itself.
func advanceCursor(ctx context.Context, tx *sql.Tx, conv string, floor int64, held []int64) (int64, error) {
	var cur int64
	err := tx.QueryRowContext(ctx, `SELECT seq_no FROM cursors WHERE conversation_id = ?`, conv).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		cur = floor
	} else if err != nil {
		return 0, err
	}
	if i, ok := slices.BinarySearch(held, cur+1); ok {
		for ; i < len(held) && held[i] <= cur+1; i++ {
			cur = held[i] // a seq_no twice in the batch leaves cur where it is
		}
	}
	var next int64
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE conversation_id = ? AND seq_no = ?`, conv, cur+1).Scan(&next)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// Nothing contiguous to move over.
	case err != nil:
		return 0, err
	default:
		// The end of the run starting at cur+1 is the first message after cur
		// whose successor is missing; ORDER BY ... LIMIT 1 stops the scan there.
		err = tx.QueryRowContext(ctx, `SELECT m.seq_no FROM messages m
			WHERE m.conversation_id = ?1 AND m.seq_no > ?2
			AND NOT EXISTS (SELECT 1 FROM messages n WHERE n.conversation_id = ?1 AND n.seq_no = m.seq_no + 1)
			ORDER BY m.seq_no LIMIT 1`, conv, cur).Scan(&cur)
		if err != nil {
			return 0, err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO cursors (conversation_id, seq_no) VALUES (?, ?)
		ON CONFLICT (conversation_id) DO UPDATE SET seq_no = excluded.seq_no WHERE excluded.seq_no > cursors.seq_no`, conv, cur)
	return cur, err
}

const messageColumns = `conversation_id, seq_no, message_id, sender_id, content, attachment, timestamp,
	kind, target_seq, reply_to, edited, deleted, reactions, updated_seq, attachment_info, mentions`

func scanMessages(rows *sql.Rows) ([]wire.Message, error) {
	defer rows.Close()
	msgs := []wire.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, rows.Err()
}

// scanMessage reads one row of messageColumns, then extra columns into extra.
func scanMessage(r scanner, extra ...any) (wire.Message, error) {
	var m wire.Message
	var ts int64
	var reactions, info, mentions string
	dest := append([]any{&m.ConversationID, &m.SeqNo, &m.MessageID, &m.SenderID, &m.Content, &m.Attachment, &ts,
		&m.Kind, &m.TargetSeq, &m.ReplyTo, &m.Edited, &m.Deleted, &reactions, &m.UpdatedSeq, &info, &mentions}, extra...)
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.Timestamp = fromNanos(ts)
	fromCachedContent(&m)
	m.Reactions = decodeReactions(reactions)
	m.AttachmentInfo = decodeAttachmentInfo(info)
	if mentions != "" {
		m.Mentions = strings.Split(mentions, ",")
	}
	return m, nil
}

// Messages returns up to limit cached messages of a conversation with seq_no
// below beforeSeq (0: the newest), newest first, like the server's history.
func (s *Store) Messages(ctx context.Context, conversationID string, beforeSeq int64, limit int) ([]wire.Message, error) {
	if limit <= 0 {
		limit = wire.DefaultPageSize
	}
	if beforeSeq <= 0 {
		beforeSeq = 1<<63 - 1
	}
	rows, err := s.db.QueryContext(ctx, pageBelowQuery, conversationID, beforeSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("cached messages of %s: %w", conversationID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("cached messages of %s: %w", conversationID, err)
	}
	return msgs, nil
}

// MessagesAfter returns up to limit cached messages with seq_no above afterSeq,
// oldest first.
func (s *Store) MessagesAfter(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]wire.Message, error) {
	if limit <= 0 {
		limit = wire.MaxPageSize
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE conversation_id = ? AND seq_no > ? ORDER BY seq_no LIMIT ?`, conversationID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("cached messages of %s: %w", conversationID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("cached messages of %s: %w", conversationID, err)
	}
	return msgs, nil
}

// Message returns one cached message, or ErrNotFound.
func (s *Store) Message(ctx context.Context, conversationID string, seqNo int64) (wire.Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE conversation_id = ? AND seq_no = ?`, conversationID, seqNo)
	if err != nil {
		return wire.Message{}, fmt.Errorf("cached message %s/%d: %w", conversationID, seqNo, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return wire.Message{}, fmt.Errorf("cached message %s/%d: %w", conversationID, seqNo, err)
	}
	if len(msgs) == 0 {
		return wire.Message{}, fmt.Errorf("cached message %s/%d: %w", conversationID, seqNo, ErrNotFound)
	}
	return msgs[0], nil
}

// LatestSeq returns the highest cached seq_no of a conversation (0: none).
func (s *Store) LatestSeq(ctx context.Context, conversationID string) (int64, error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(seq_no) FROM messages WHERE conversation_id = ?`, conversationID).Scan(&n); err != nil {
		return 0, fmt.Errorf("latest cached seq of %s: %w", conversationID, err)
	}
	return n.Int64, nil
}

// Cursors returns every conversation's sync cursor, for a sync frame.
func (s *Store) Cursors(ctx context.Context) ([]wire.Cursor, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id, seq_no FROM cursors ORDER BY conversation_id`)
	if err != nil {
		return nil, fmt.Errorf("sync cursors: %w", err)
	}
	defer rows.Close()
	cs := []wire.Cursor{}
	for rows.Next() {
		var c wire.Cursor
		if err := rows.Scan(&c.ConversationID, &c.SeqNo); err != nil {
			return nil, fmt.Errorf("sync cursors: %w", err)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sync cursors: %w", err)
	}
	return cs, nil
}

// Cursor returns one conversation's sync cursor; ok is false when the device has
// no message of it yet.
func (s *Store) Cursor(ctx context.Context, conversationID string) (seqNo int64, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT seq_no FROM cursors WHERE conversation_id = ?`, conversationID).Scan(&seqNo)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("sync cursor of %s: %w", conversationID, err)
	}
	return seqNo, true, nil
}

// AdvanceCursor moves a conversation's cursor forward to seqNo (never back), for
// when the device learns that nothing up to seqNo is missing, and then over any
// contiguous cached messages after it.
func (s *Store) AdvanceCursor(ctx context.Context, conversationID string, seqNo int64) error {
	if err := wire.ValidateConversationID(conversationID); err != nil {
		return fmt.Errorf("advance cursor: %w", err)
	}
	if seqNo < 0 {
		return fmt.Errorf("advance cursor: %w", wire.Errorf(wire.CodeInvalid, "seq_no must not be negative"))
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cursors (conversation_id, seq_no) VALUES (?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET seq_no = excluded.seq_no WHERE excluded.seq_no > cursors.seq_no`,
			conversationID, seqNo); err != nil {
			return err
		}
		_, err := advanceCursor(ctx, tx, conversationID, seqNo, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("advance cursor of %s: %w", conversationID, err)
	}
	return nil
}
