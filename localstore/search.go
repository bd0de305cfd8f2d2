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
//
// The full-text index drives both queries (CROSS JOIN keeps SQLite from
// reordering them): left to itself, SQLite planned the conversation filter
// as a walk of the conversation's search_ids with one full-text query per
// row, a minute on a conversation of 50,000 messages
// (TestSearchPlanDrivenByTheIndex). In one conversation seq_no orders the
// hits, so only the newest limit of them are read from messages; snippets
// are drawn for those alone (snippet.go), since the index's snippet() is
// computed for every hit before the sort and would need a second full-text
// query to be asked for fewer.
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
	q, args := searchQuery(match, conversationID, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	terms := queryWords(query)
	for i, w := range terms {
		terms[i] = fold(w)
	}
	var hits []SearchHit
	for rows.Next() {
		var h SearchHit
		var err error
		if h.Message, err = scanMessage(rows); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		h.Snippet = snippet(h.Message.Content, terms)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// searchQuery is Search's statement: the index first, then the rows it
// names (Search says why).
func searchQuery(match, conversationID string, limit int) (string, []any) {
	if conversationID == "" {
		return `SELECT ` + prefixed("m.", messageColumns) + `
		FROM message_search
		CROSS JOIN search_ids s ON s.docid = message_search.docid
		CROSS JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = s.seq_no
		WHERE message_search MATCH ?
		ORDER BY m.timestamp DESC, m.seq_no DESC LIMIT ?`, []any{match, limit}
	}
	return `SELECT ` + prefixed("m.", messageColumns) + `
		FROM (SELECT s.conversation_id, s.seq_no
			FROM message_search
			CROSS JOIN search_ids s ON s.docid = message_search.docid
			WHERE message_search MATCH ? AND s.conversation_id = ?
			ORDER BY s.seq_no DESC LIMIT ?) hit
		CROSS JOIN messages m ON m.conversation_id = hit.conversation_id AND m.seq_no = hit.seq_no
		ORDER BY m.seq_no DESC`, []any{match, conversationID, limit}
}

// indexQueued adds the messages waiting in search_queue to the index, in one
// transaction (migration 0006 says why they wait).
func (s *Store) indexQueued(ctx context.Context) error {
	_, err := s.IndexQueued(ctx, 0)
	return err
}

// IndexQueued adds at most limit (0: all) of the messages waiting in
// search_queue to the index, in one transaction, and reports how many still
// wait. A UI indexes a large backlog a step at a time and says so, where
// Search, which indexes all of it first, would keep it waiting for seconds.
func (s *Store) IndexQueued(ctx context.Context, limit int) (left int, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		batch := `SELECT docid FROM search_queue`
		if limit > 0 {
			batch += fmt.Sprintf(` ORDER BY docid LIMIT %d`, limit)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_search (docid, content)
			SELECT q.docid, m.content FROM (`+batch+`) q
			CROSS JOIN search_ids s ON s.docid = q.docid
			CROSS JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = s.seq_no
			WHERE m.content <> '' AND m.kind = ''`); err != nil {
			return fmt.Errorf("index messages for search: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_queue WHERE docid IN (`+batch+`)`); err != nil {
			return fmt.Errorf("index messages for search: %w", err)
		}
		if limit > 0 {
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM search_queue`).Scan(&left)
		}
		return nil
	})
	return left, err
}

// matchExpr turns what a person typed into an FTS query that cannot be a
// syntax error: each word (letters and digits) a quoted prefix term, all of
// them required.
func matchExpr(query string) string {
	words := queryWords(query)
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`*"`)
	}
	return strings.Join(terms, " ")
}

// queryWords are the words of what a person typed: letters and digits.
func queryWords(query string) []string {
	return strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
