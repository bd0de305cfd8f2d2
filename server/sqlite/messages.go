package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

func (s *Store) AppendMessage(ctx context.Context, m server.Message, receivers []string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		dup, err := s.insertMessage(m)
		if err != nil {
			return err
		}
		if dup != nil {
			return dup
		}
		if m.IsEvent() {
			return s.afterEvent(tx, m, receivers)
		}
		return s.afterAppend(m, m, receivers)
	})
}

var _ server.QueuedAppender = (*Store)(nil)

// AppendMessages stores a sender's messages in one job: each row on its own,
// then the conversation, the sender's boundaries and the receivers' pending rows
// once for the lot, which is most of what a batch saves.
func (s *Store) AppendMessages(ctx context.Context, msgs []server.Message, receivers []string) ([]*server.DuplicateError, error) {
	return s.QueueAppend(ctx, msgs, receivers)()
}

// QueueAppend is AppendMessages queued: wait returns when it is durable.
func (s *Store) QueueAppend(ctx context.Context, msgs []server.Message, receivers []string) (wait func() ([]*server.DuplicateError, error)) {
	dups := make([]*server.DuplicateError, len(msgs))
	done := s.enqueue(ctx, func(*sql.Tx) error {
		first, last := -1, -1
		for i, m := range msgs {
			dup, err := s.insertMessage(m)
			if err != nil {
				return err
			}
			dups[i] = dup
			if dup == nil {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 {
			return nil
		}
		return s.afterAppend(msgs[first], msgs[last], receivers)
	})
	return func() ([]*server.DuplicateError, error) {
		if err := done(); err != nil {
			return nil, err
		}
		return dups, nil
	}
}

// MaxAppend has no limit of its own to give: a batch is one group-commit job
// whatever its size, and the Service's batches are bounded already.
func (s *Store) MaxAppend(int) int { return 1 << 16 }

// insertMessage inserts m's row; a resend of a stored message_id gives its
// original instead. Insert first: a new message is the common case, and the
// unique keys on (conversation_id, seq_no) and (conversation_id, message_id)
// decide the rest; only a conflict pays for the idempotency lookup.
func (s *Store) insertMessage(m server.Message) (*server.DuplicateError, error) {
	n, err := s.hot("insertMsg").exec(m.ConversationID, m.SeqNo, m.MessageID, m.SenderID, m.ReceiverID, m.Content, ns(m.Timestamp), m.Attachment,
		m.Kind, m.TargetSeq, m.ReplyTo, encodeAttachmentInfo(m.AttachmentInfo), encodeMentions(m.Mentions))
	if err != nil {
		return nil, fmt.Errorf("insert message: %w", err)
	}
	if n == 1 {
		return nil, s.insertMentions(m)
	}
	var row msgRow
	err = s.hot("msgByID").scanRow([]any{m.ConversationID, m.MessageID}, row.dest()...)
	if err == nil {
		orig, err := row.message(m.ConversationID)
		if err != nil {
			return nil, err
		}
		return &server.DuplicateError{Original: orig}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("idempotency lookup: %w", err)
	}
	return nil, server.ErrSeqTaken
}

// afterAppend moves the conversation (last_seq, preview) to last, the sender's
// boundaries up to it (a reply implies read) and the receivers' pending rows to
// cover first..last, once the rows from first to last are inserted. A first at
// or below last_seq fails the job, so its inserts roll back with it.
func (s *Store) afterAppend(first, last server.Message, receivers []string) error {
	n, err := s.hot("updateConv").exec(last.SeqNo, last.Preview(), last.SenderID, ns(last.Timestamp), last.ConversationID, first.SeqNo)
	if err != nil {
		return fmt.Errorf("update conversation: %w", err)
	}
	if n == 0 {
		var one int
		if err := s.hot("convExists").scanRow([]any{last.ConversationID}, &one); errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		} else if err != nil {
			return fmt.Errorf("conversation lookup: %w", err)
		}
		return server.ErrSeqTaken // at or below last_seq
	}
	return s.senderAndPending(first, last, receivers)
}

// senderAndPending moves the sender's boundaries up to last (a reply implies
// read) and the receivers' pending rows to cover first..last: what every
// append does once its rows are in.
func (s *Store) senderAndPending(first, last server.Message, receivers []string) error {
	if _, err := s.hot("upsertStatus").exec(last.SenderID, last.ConversationID, last.SeqNo, last.SeqNo); err != nil {
		return fmt.Errorf("sender status: %w", err)
	}
	pending := s.hot("upsertPending")
	for _, r := range receivers {
		if _, err := pending.exec(r, last.ConversationID, first.SeqNo, last.SeqNo); err != nil {
			return fmt.Errorf("pending delivery for %s: %w", r, err)
		}
	}
	if ack := min(last.SenderAck, last.SeqNo); ack > 0 {
		// The sender's device acked with its send (server.SenderAcker).
		return s.clearPendingUpTo(last.SenderID, last.ConversationID, ack)
	}
	return nil
}

// StoresSenderAck says this store applies Message.SenderAck in the append.
func (s *Store) StoresSenderAck() {}

// clearPendingUpTo drops what userID's pending row covers up to delivered:
// the row when nothing after it is pending, else its start moves past it.
func (s *Store) clearPendingUpTo(userID, convID string, delivered int64) error {
	n, err := s.hot("clearPending").exec(userID, convID, delivered)
	if err != nil {
		return fmt.Errorf("clear pending: %w", err)
	}
	if n == 0 {
		if _, err := s.hot("advancePending").exec(userID, convID, delivered); err != nil {
			return fmt.Errorf("advance pending: %w", err)
		}
	}
	return nil
}

func (s *Store) NextSeq(ctx context.Context, convID string) (int64, error) {
	var seq int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRow(`UPDATE conversations SET counter = MAX(counter, last_seq) + 1 WHERE conversation_id = ? RETURNING counter`, convID).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return server.ErrNotFound
		}
		return err
	})
	return seq, err
}

const msgColumns = `seq_no, message_id, sender_id, receiver_id, content, ts, s3_ref, attachment,
	kind, target_seq, reply_to, edited, deleted, reactions, updated_seq, attachment_info, mentions`

// msgRow is a row of msgColumns being scanned.
type msgRow struct {
	m               server.Message
	ts              int64
	edited, deleted int64
	reactions       string
	attachmentInfo  string
	mentions        string
}

func (r *msgRow) dest() []any {
	m := &r.m
	return []any{&m.SeqNo, &m.MessageID, &m.SenderID, &m.ReceiverID, &m.Content, &r.ts, &m.S3Ref, &m.Attachment,
		&m.Kind, &m.TargetSeq, &m.ReplyTo, &r.edited, &r.deleted, &r.reactions, &m.UpdatedSeq, &r.attachmentInfo, &r.mentions}
}

func (r *msgRow) message(convID string) (server.Message, error) {
	m := r.m
	m.ConversationID, m.Timestamp = convID, fromNS(r.ts)
	m.Edited, m.Deleted = r.edited != 0, r.deleted != 0
	reactions, err := decodeReactions(r.reactions)
	if err != nil {
		return m, fmt.Errorf("message %s/%d: %w", convID, m.SeqNo, err)
	}
	m.Reactions = reactions
	if m.AttachmentInfo, err = decodeAttachmentInfo(r.attachmentInfo); err != nil {
		return m, fmt.Errorf("message %s/%d: %w", convID, m.SeqNo, err)
	}
	m.Mentions = decodeMentions(r.mentions)
	return m, nil
}

// An attachment's description is kept as JSON; "" for none.
func decodeAttachmentInfo(s string) (*wire.AttachmentInfo, error) {
	if s == "" {
		return nil, nil
	}
	var a wire.AttachmentInfo
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("attachment_info: %w", err)
	}
	return &a, nil
}

func encodeAttachmentInfo(a *wire.AttachmentInfo) string {
	if a == nil {
		return ""
	}
	b, _ := json.Marshal(a) // strings and a number always encode
	return string(b)
}

// Reactions are kept on the message's row as a JSON object, user_id → emoji;
// "" for none.
func decodeReactions(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var r map[string]string
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("reactions: %w", err)
	}
	return r, nil
}

func encodeReactions(r map[string]string) string {
	if len(r) == 0 {
		return ""
	}
	b, _ := json.Marshal(r) // a map of strings always encodes
	return string(b)
}

// queryMessages runs a messages query that returns at most limit rows.
func (s *Store) queryMessages(ctx context.Context, convID string, limit int, q string, args ...any) ([]server.Message, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	defer rows.Close()
	out := make([]server.Message, 0, min(limit, 1000))
	var row msgRow
	dest := row.dest()
	for rows.Next() {
		row = msgRow{}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("list messages: %w", err)
		}
		m, err := row.message(convID)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (s *Store) ListMessages(ctx context.Context, convID string, beforeSeq int64, limit int) ([]server.Message, error) {
	if beforeSeq <= 0 {
		beforeSeq = 1<<63 - 1
	}
	return s.queryMessages(ctx, convID, limit, `SELECT `+msgColumns+` FROM messages WHERE conversation_id = ? AND seq_no < ? ORDER BY seq_no DESC LIMIT ?`,
		convID, beforeSeq, limit)
}

func (s *Store) ListMessagesAfter(ctx context.Context, convID string, afterSeq int64, limit int) ([]server.Message, error) {
	return s.queryMessages(ctx, convID, limit, `SELECT `+msgColumns+` FROM messages WHERE conversation_id = ? AND seq_no > ? ORDER BY seq_no LIMIT ?`,
		convID, afterSeq, limit)
}

func (s *Store) SentMessages(ctx context.Context, convID string, messageIDs []string) (map[string]server.Message, error) {
	out := map[string]server.Message{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(messageIDs)+1)
	args = append(args, convID)
	for _, id := range messageIDs {
		args = append(args, id)
	}
	// The send path asks this for every batch and the answer is nearly always
	// "none": the index alone answers that. INDEXED BY: with an IN list and no
	// ANALYZE statistics SQLite's planner walks the conversation by primary key
	// instead, every message of it.
	rows, err := s.query(ctx, `SELECT message_id, seq_no FROM messages INDEXED BY messages_by_message_id
		WHERE conversation_id = ? AND message_id IN (`+placeholders(len(messageIDs))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("sent messages: %w", err)
	}
	var seqs []int64
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sent messages: %w", err)
		}
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sent messages: %w", err)
	}
	for _, seq := range seqs {
		ms, err := s.queryMessages(ctx, convID, 1, `SELECT `+msgColumns+` FROM messages WHERE conversation_id = ? AND seq_no = ?`, convID, seq)
		if err != nil {
			return nil, fmt.Errorf("sent messages: %w", err)
		}
		for _, m := range ms {
			out[m.MessageID] = m
		}
	}
	return out, nil
}

func (s *Store) CountMessages(ctx context.Context, convID string, afterSeq, upTo int64, limit int) (int, error) {
	if upTo <= afterSeq || limit < 1 {
		return 0, nil
	}
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM messages
		WHERE conversation_id = ? AND seq_no > ? AND seq_no <= ? AND kind = '' LIMIT ?)`, convID, afterSeq, upTo, limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count messages: %w", err)
	}
	return n, nil
}

func (s *Store) ListStatuses(ctx context.Context, convID string, userIDs []string) ([]server.Status, error) {
	out := make([]server.Status, len(userIDs))
	idx := map[string]int{}
	args := []any{convID}
	for i, u := range userIDs {
		out[i] = server.Status{UserID: u, ConversationID: convID}
		idx[u] = i
		args = append(args, u)
	}
	if len(userIDs) == 0 {
		return out, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT user_id, last_delivered_seq, last_read_seq FROM message_status
		WHERE conversation_id = ? AND user_id IN (`+placeholders(len(userIDs))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("list statuses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		var d, r int64
		if err := rows.Scan(&u, &d, &r); err != nil {
			return nil, fmt.Errorf("list statuses: %w", err)
		}
		if i, ok := idx[u]; ok {
			out[i].LastDeliveredSeq, out[i].LastReadSeq = d, r
		}
	}
	return out, rows.Err()
}

func (s *Store) AdvanceStatus(ctx context.Context, userID, convID string, delivered, read int64) (server.Status, bool, error) {
	st := server.Status{UserID: userID, ConversationID: convID}
	delivered = max(delivered, read)
	var changed bool
	err := s.write(ctx, func(*sql.Tx) error {
		var d, r int64
		err := s.hot("getStatus").scanRow([]any{userID, convID}, &d, &r)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read status: %w", err)
		}
		st.LastDeliveredSeq, st.LastReadSeq = max(d, delivered), max(r, read)
		changed = st.LastDeliveredSeq != d || st.LastReadSeq != r
		if changed {
			if _, err := s.hot("upsertStatus").exec(userID, convID, st.LastDeliveredSeq, st.LastReadSeq); err != nil {
				return fmt.Errorf("write status: %w", err)
			}
		}
		// Pending rows follow the ack even when the boundary did not move: a reply
		// moves the sender's boundary (implicit read) without touching their
		// pending row, so an ack below that boundary must still clear what it
		// covers, or the acked messages come again on every reconnect. Only what
		// it covers: the reply may have passed messages still on their way to
		// this device, and their pending row is what brings them again if the
		// live copy is lost.
		return s.clearPendingUpTo(userID, convID, delivered)
	})
	return st, changed, err
}

func (s *Store) ListPending(ctx context.Context, userID string) ([]server.Pending, error) {
	rows, err := s.query(ctx, `SELECT conversation_id, first_undelivered_seq FROM pending_deliveries WHERE receiver_id = ? ORDER BY conversation_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list pending: %w", err)
	}
	defer rows.Close()
	var out []server.Pending
	for rows.Next() {
		p := server.Pending{ReceiverID: userID}
		if err := rows.Scan(&p.ConversationID, &p.FirstUndeliveredSeq); err != nil {
			return nil, fmt.Errorf("list pending: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
