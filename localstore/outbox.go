package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chatterm/chat/wire"
)

// OutboxEntry is a message typed on this device that the server has not yet
// confirmed. It is resent with the same MessageID until the server's "sent"
// answer arrives, so the server stores it once.
type OutboxEntry struct {
	MessageID      string
	ConversationID string
	Content        string
	Attachment     string               // a media_id, or empty
	AttachmentInfo *wire.AttachmentInfo // its file's name, type and size
	Kind           string               // an event (wire.KindReaction...), or empty for a message
	TargetSeq      int64                // the message an event changes
	ReplyTo        int64                // the message a message quotes
	CreatedAt      time.Time
	Attempts       int
	// Fresh is set by the EnqueueEntry call that created the entry: nothing
	// has sent it yet. Not stored.
	Fresh bool
	// Err is set when the server refused the message for good (too large, not a
	// participant...). Such entries are kept for the user to see but not resent.
	Err *wire.Error
}

// Enqueue durably records a message to send. Enqueueing the same message_id again
// with the same conversation and content returns the existing entry, so a retried
// call is harmless; with different content it is an error.
func (s *Store) Enqueue(ctx context.Context, conversationID, messageID, content string) (OutboxEntry, error) {
	return s.EnqueueEntry(ctx, OutboxEntry{ConversationID: conversationID, MessageID: messageID, Content: content})
}

// EnqueueEntry is Enqueue for a message that may carry an attachment (then its
// content may be empty). CreatedAt, Attempts and Err are set here.
func (s *Store) EnqueueEntry(ctx context.Context, e OutboxEntry) (OutboxEntry, error) {
	if err := wire.ValidateConversationID(e.ConversationID); err != nil {
		return OutboxEntry{}, fmt.Errorf("enqueue: %w", err)
	}
	if err := e.SendRequest().Validate(); err != nil {
		return OutboxEntry{}, fmt.Errorf("enqueue: %w", err)
	}
	var out OutboxEntry
	err := s.tx(ctx, func(tx *sql.Tx) error {
		got, err := outboxEntry(ctx, tx, e.MessageID)
		if err == nil {
			if got.ConversationID != e.ConversationID || !sameRequest(got.SendRequest(), e.SendRequest()) {
				return wire.Errorf(wire.CodeConflict, "message_id %s is already queued with other content", e.MessageID)
			}
			out = got
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		out = OutboxEntry{MessageID: e.MessageID, ConversationID: e.ConversationID, Content: e.Content,
			Attachment: e.Attachment, AttachmentInfo: e.AttachmentInfo, Kind: e.Kind, TargetSeq: e.TargetSeq, ReplyTo: e.ReplyTo, CreatedAt: s.now().UTC()}
		_, err = tx.ExecContext(ctx, `INSERT INTO outbox (message_id, conversation_id, content, attachment, attachment_info, kind, target_seq, reply_to, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			out.MessageID, out.ConversationID, out.Content, out.Attachment, encodeAttachmentInfo(out.AttachmentInfo),
			out.Kind, out.TargetSeq, out.ReplyTo, nanos(out.CreatedAt))
		out.Fresh = err == nil
		return err
	})
	if err != nil {
		return OutboxEntry{}, fmt.Errorf("enqueue %s: %w", e.MessageID, err)
	}
	return out, nil
}

const outboxColumns = `message_id, conversation_id, content, attachment, attachment_info, kind, target_seq, reply_to,
	created_at, attempts, error_code, error_message`

// SendRequest is what the entry asks the server for.
func (e OutboxEntry) SendRequest() wire.SendRequest {
	return wire.SendRequest{MessageID: e.MessageID, Content: e.Content, Attachment: e.Attachment, AttachmentInfo: e.AttachmentInfo,
		Kind: e.Kind, TargetSeq: e.TargetSeq, ReplyTo: e.ReplyTo}
}

// sameRequest says whether two sends ask for the same thing.
func sameRequest(a, b wire.SendRequest) bool {
	ai, bi := a.AttachmentInfo, b.AttachmentInfo
	a.AttachmentInfo, b.AttachmentInfo = nil, nil
	return a == b && (ai == nil) == (bi == nil) && (ai == nil || *ai == *bi)
}

type scanner interface{ Scan(...any) error }

func scanOutbox(r scanner) (OutboxEntry, error) {
	var e OutboxEntry
	var at int64
	var code, msg, info string
	if err := r.Scan(&e.MessageID, &e.ConversationID, &e.Content, &e.Attachment, &info, &e.Kind, &e.TargetSeq, &e.ReplyTo,
		&at, &e.Attempts, &code, &msg); err != nil {
		return OutboxEntry{}, err
	}
	e.AttachmentInfo = decodeAttachmentInfo(info)
	e.CreatedAt = fromNanos(at)
	if code != "" {
		e.Err = &wire.Error{Code: wire.Code(code), Message: msg}
	}
	return e, nil
}

func outboxEntry(ctx context.Context, tx *sql.Tx, messageID string) (OutboxEntry, error) {
	e, err := scanOutbox(tx.QueryRowContext(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE message_id = ?`, messageID))
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxEntry{}, ErrNotFound
	}
	return e, err
}

// Outbox returns the entries of one conversation, or of all when conversationID
// is empty, in the order they were typed. Refused entries are included (Err set).
func (s *Store) Outbox(ctx context.Context, conversationID string) ([]OutboxEntry, error) {
	var rows *sql.Rows
	var err error
	if conversationID == "" {
		rows, err = s.db.QueryContext(ctx, `SELECT `+outboxColumns+` FROM outbox ORDER BY id`)
	} else {
		rows, err = s.db.QueryContext(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE conversation_id = ? ORDER BY id`, conversationID)
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	defer rows.Close()
	es := []OutboxEntry{}
	for rows.Next() {
		e, err := scanOutbox(rows)
		if err != nil {
			return nil, fmt.Errorf("outbox: %w", err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	return es, nil
}

// Unsent counts the entries still to be sent (not refused).
func (s *Store) Unsent(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE error_code = ''`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count unsent: %w", err)
	}
	return n, nil
}

// NoteAttempt counts one more send of an entry.
func (s *Store) NoteAttempt(ctx context.Context, messageID string) error {
	if _, err := s.exec(ctx, `UPDATE outbox SET attempts = attempts + 1 WHERE message_id = ?`, messageID); err != nil {
		return fmt.Errorf("note attempt of %s: %w", messageID, err)
	}
	return nil
}

// CompleteSend applies the server's "sent" answer: in one transaction the outbox
// entry goes and the stored message takes its place in the cache; first is true.
// When the entry is already gone (the answer came twice) it returns the cached
// message with first false, or ErrNotFound if the message was never queued here.
func (s *Store) CompleteSend(ctx context.Context, sent wire.SendResponse) (m wire.Message, first bool, err error) {
	done, err := s.CompleteSends(ctx, sent)
	if err != nil {
		return wire.Message{}, false, err
	}
	if done[0].Err != nil {
		return wire.Message{}, false, fmt.Errorf("complete send %s: %w", sent.MessageID, done[0].Err)
	}
	return done[0].Message, done[0].First, nil
}

// Completed is the outcome of one "sent" answer in CompleteSends.
type Completed struct {
	Message wire.Message // the stored message as cached
	First   bool         // this answer moved it from the outbox (false: a repeat)
	Err     error        // ErrNotFound: never queued here; or a mismatched answer
	// Replaced: the cache held another message under the answer's seq_no,
	// and it was removed: the server's store went back under this cache
	// (a restore), and the conversation wants reconciling (ApplyRollback).
	Replaced bool
}

// CompleteSends applies several "sent" answers in one transaction (the answers
// to a burst of sends arrive together); the result has one entry per answer.
func (s *Store) CompleteSends(ctx context.Context, sents ...wire.SendResponse) ([]Completed, error) {
	out := make([]Completed, len(sents))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var msgs []wire.Message
		for i, sent := range sents {
			e, err := outboxEntry(ctx, tx, sent.MessageID)
			if errors.Is(err, ErrNotFound) {
				m, err := scanOne(tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE conversation_id = ? AND seq_no = ?`,
					sent.ConversationID, sent.SeqNo))
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				out[i] = Completed{Message: m, Err: err}
				continue
			}
			if err != nil {
				return err
			}
			if e.ConversationID != sent.ConversationID {
				out[i].Err = wire.Errorf(wire.CodeInvalid, "sent answer for %s names conversation %s, queued for %s", sent.MessageID, sent.ConversationID, e.ConversationID)
				continue
			}
			m := wire.Message{ConversationID: sent.ConversationID, SeqNo: sent.SeqNo, MessageID: sent.MessageID,
				SenderID: s.self, Content: e.Content, Attachment: e.Attachment, AttachmentInfo: e.AttachmentInfo, Timestamp: sent.Timestamp,
				Kind: e.Kind, TargetSeq: e.TargetSeq, ReplyTo: e.ReplyTo}
			if e.Kind == wire.KindReaction {
				m.Content = sent.Content // the toggle as the server resolved it
			}
			if e.Kind == "" {
				m.Mentions = sent.Mentions // as the server resolved them (none from an older one)
			}
			if err := validMessage(m); err != nil {
				out[i].Err = err
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE message_id = ?`, sent.MessageID); err != nil {
				return err
			}
			// The server has just stored this message under that number: a
			// message cached there under another message_id is one it lost.
			res, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE conversation_id = ? AND seq_no = ? AND message_id <> ?`,
				m.ConversationID, m.SeqNo, m.MessageID)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			out[i] = Completed{Message: m, First: true, Replaced: n > 0}
			msgs = append(msgs, m)
		}
		_, err := s.putMessages(ctx, tx, msgs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("complete sends: %w", err)
	}
	return out, nil
}

func scanOne(rows *sql.Rows, err error) (wire.Message, error) {
	if err != nil {
		return wire.Message{}, err
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return wire.Message{}, err
	}
	if len(msgs) == 0 {
		return wire.Message{}, ErrNotFound
	}
	return msgs[0], nil
}

// FailSend marks an entry as refused for good; it stays for the user to see and
// is no longer resent.
func (s *Store) FailSend(ctx context.Context, messageID string, e *wire.Error) error {
	if e == nil || e.Code == "" {
		return fmt.Errorf("fail send %s: %w", messageID, wire.Errorf(wire.CodeInvalid, "an error code is required"))
	}
	res, err := s.exec(ctx, `UPDATE outbox SET error_code = ?, error_message = ? WHERE message_id = ?`,
		string(e.Code), e.Message, messageID)
	if err != nil {
		return fmt.Errorf("fail send %s: %w", messageID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("fail send %s: %w", messageID, ErrNotFound)
	}
	return nil
}

// Discard removes an outbox entry without sending it (the user gave up on it).
func (s *Store) Discard(ctx context.Context, messageID string) error {
	res, err := s.exec(ctx, `DELETE FROM outbox WHERE message_id = ?`, messageID)
	if err != nil {
		return fmt.Errorf("discard %s: %w", messageID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("discard %s: %w", messageID, ErrNotFound)
	}
	return nil
}
