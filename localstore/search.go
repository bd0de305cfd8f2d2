package localstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	"github.com/chatterm/chat/wire"
)

// SearchHit is one message a search found, with the words that matched
// marked in Snippet by SnippetStart and SnippetEnd.
type SearchHit struct {
	Message wire.Message
	Snippet string
}

// Marks around the matched words in SearchHit.Snippet: control characters
// no message text can hold (the sanitiser drops them), so a UI can find and
// style them.
const (
	SnippetStart = "\x02"
	SnippetEnd   = "\x03"
)

// Search finds cached messages (not events, not deleted) with every word of
// query, as a word or the start of one, case and accents ignored: "deploy
// fail" finds "Deployment failed". conversationID narrows it to one
// conversation (empty: all). Newest first, at most limit.
func (s *Store) Search(ctx context.Context, query, conversationID string, limit int) ([]SearchHit, error) {
	match := matchExpr(query)
	if match == "" {
		return nil, wire.Errorf(wire.CodeInvalid, "search for at least one word")
	}
	if limit <= 0 {
		limit = 50
	}
	if err := s.indexQueued(ctx); err != nil {
		return nil, err
	}
	q := `SELECT ` + prefixed("m.", messageColumns) + `,
		snippet(message_search, '` + SnippetStart + `', '` + SnippetEnd + `', '…', -1, 12)
		FROM message_search
		JOIN search_ids s ON s.docid = message_search.docid
		JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = s.seq_no
		WHERE message_search MATCH ?`
	args := []any{match}
	if conversationID != "" {
		q += ` AND s.conversation_id = ?`
		args = append(args, conversationID)
	}
	q += ` ORDER BY m.timestamp DESC, m.seq_no DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var hits []SearchHit
	for rows.Next() {
		var h SearchHit
		var err error
		if h.Message, err = scanMessage(rows, &h.Snippet); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// indexQueued adds the messages waiting in search_queue to the index, in one
// transaction (migration 0006 says why they wait).
func (s *Store) indexQueued(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_search (docid, content)
			SELECT q.docid, m.content FROM search_queue q
			JOIN search_ids s ON s.docid = q.docid
			JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = s.seq_no
			WHERE m.content <> '' AND m.kind = ''`); err != nil {
			return fmt.Errorf("index messages for search: %w", err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM search_queue`)
		return err
	})
}

// matchExpr turns what a person typed into an FTS query that cannot be a
// syntax error: each word (letters and digits) a quoted prefix term, all of
// them required.
func matchExpr(query string) string {
	words := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`*"`)
	}
	return strings.Join(terms, " ")
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
