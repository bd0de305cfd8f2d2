package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/internal/searchwords"
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

// Search finds cached messages (not deleted) and membership lines (as
// searchText writes them; not other events) with every word of query, as a word or the start of one, case and accents ignored: "deploy
// fail" finds "Deployment failed". conversationID narrows it to one
// conversation (empty: all). Newest first, at most limit: the first page of
// SearchPage.
func (s *Store) Search(ctx context.Context, query, conversationID string, limit int) ([]SearchHit, error) {
	hits, _, err := s.SearchPage(ctx, SearchQuery{Words: query, ConversationID: conversationID, Limit: limit})
	return hits, err
}

// SearchQuery is one page of a search.
type SearchQuery struct {
	Words          string
	ConversationID string // empty: every conversation
	// Before: the page starts after this hit (the zero value: at the
	// newest); a page's next cursor is the one to give for the page after.
	Before SearchCursor
	Limit  int // default 50
}

// SearchCursor is a place in a search's results (newest first): the last
// hit of a page. In one conversation only SeqNo counts.
type SearchCursor struct {
	Timestamp      time.Time
	ConversationID string
	SeqNo          int64
}

// IsZero reports whether the cursor is the start (or, as a next cursor,
// that there is no more).
func (c SearchCursor) IsZero() bool { return c.SeqNo == 0 }

// String is the cursor as a command line takes it back: "SEQ" in one
// conversation (Timestamp zero), else "UNIXNANOS.SEQ.CONVERSATION".
func (c SearchCursor) String() string {
	if c.Timestamp.IsZero() {
		return strconv.FormatInt(c.SeqNo, 10)
	}
	return fmt.Sprintf("%d.%d.%s", c.Timestamp.UnixNano(), c.SeqNo, c.ConversationID)
}

// ParseSearchCursor reads SearchCursor.String.
func ParseSearchCursor(s string) (SearchCursor, error) {
	bad := wire.Errorf(wire.CodeInvalid, "search cursor %q: want SEQ or UNIXNANOS.SEQ.CONVERSATION, as a search printed it", s)
	parts := strings.SplitN(s, ".", 3)
	if len(parts) == 1 {
		seq, err := strconv.ParseInt(s, 10, 64)
		if err != nil || seq <= 0 {
			return SearchCursor{}, bad
		}
		return SearchCursor{SeqNo: seq}, nil
	}
	if len(parts) != 3 {
		return SearchCursor{}, bad
	}
	ns, err1 := strconv.ParseInt(parts[0], 10, 64)
	seq, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || seq <= 0 || wire.ValidateConversationID(parts[2]) != nil {
		return SearchCursor{}, bad
	}
	return SearchCursor{Timestamp: time.Unix(0, ns).UTC(), ConversationID: parts[2], SeqNo: seq}, nil
}

// SearchPage is one page of Search's results, and the cursor of the next
// page (zero: this was the last). Pages put together are every hit once, in
// order, while the cache does not change between them.
//
// In one conversation the full-text index is read as a range of docids
// (migration 0010 keys it by conversation and seq_no), newest first, and
// stops after the page: a word in every message of a 50,000-message
// conversation costs what a rare one does. Across conversations every hit
// is joined to its message to be ordered by time (CROSS JOIN keeps SQLite
// from reordering: left to itself it once walked a conversation's rows with
// one full-text query per row, TestSearchPlanDrivenByTheIndex). Snippets are
// drawn for the page alone (snippet.go): the index's snippet() would be
// computed for every hit before the sort.
func (s *Store) SearchPage(ctx context.Context, sq SearchQuery) (hits []SearchHit, next SearchCursor, err error) {
	match := matchExpr(sq.Words)
	if match == "" {
		return nil, next, wire.Errorf(wire.CodeInvalid, "search for at least one word")
	}
	if sq.Limit <= 0 {
		sq.Limit = 50
	}
	if sq.ConversationID == "" && !sq.Before.IsZero() && sq.Before.Timestamp.IsZero() {
		return nil, next, wire.Errorf(wire.CodeInvalid, "search cursor %s is from a search in one conversation", sq.Before)
	}
	if err := s.indexQueued(ctx); err != nil {
		return nil, next, err
	}
	q, args, err := s.searchQuery(ctx, match, sq)
	if err != nil {
		return nil, next, fmt.Errorf("search: %w", err)
	}
	if q == "" {
		return nil, next, nil
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, next, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	terms := searchwords.Terms(sq.Words)
	more := false
	for rows.Next() {
		if len(hits) == sq.Limit { // the one past the page: there is more
			more = true
			break
		}
		var h SearchHit
		var err error
		if h.Message, err = scanMessage(rows); err != nil {
			return nil, next, fmt.Errorf("search: %w", err)
		}
		h.Snippet = snippet(searchText(h.Message), terms)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, next, fmt.Errorf("search: %w", err)
	}
	if more {
		last := hits[len(hits)-1].Message
		next = SearchCursor{SeqNo: last.SeqNo}
		if sq.ConversationID == "" {
			next.Timestamp, next.ConversationID = last.Timestamp, last.ConversationID
		}
	}
	return hits, next, nil
}

// seqBits is how many low bits of a docid hold the seq_no (migration 0010).
const seqBits = 32

// searchQuery is SearchPage's statement, reading one row past the page
// (SearchPage says why it is built so); "" when nothing can match.
func (s *Store) searchQuery(ctx context.Context, match string, sq SearchQuery) (string, []any, error) {
	if sq.ConversationID == "" {
		q := `SELECT ` + prefixed("m.", messageColumns) + `
		FROM message_search
		CROSS JOIN search_convs s ON s.num = message_search.docid >> 32
		CROSS JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = (message_search.docid & 4294967295)
		WHERE message_search MATCH ?`
		args := []any{match}
		if !sq.Before.IsZero() {
			q += ` AND (m.timestamp, m.conversation_id, m.seq_no) < (?, ?, ?)`
			args = append(args, nanos(sq.Before.Timestamp), sq.Before.ConversationID, sq.Before.SeqNo)
		}
		q += ` ORDER BY m.timestamp DESC, m.conversation_id DESC, m.seq_no DESC LIMIT ?`
		return q, append(args, sq.Limit+1), nil
	}
	var num int64
	err := s.db.QueryRowContext(ctx, `SELECT num FROM search_convs WHERE conversation_id = ?`, sq.ConversationID).Scan(&num)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, nil // nothing of it was ever searchable
	}
	if err != nil {
		return "", nil, err
	}
	before := int64(1) << seqBits
	if !sq.Before.IsZero() {
		before = min(sq.Before.SeqNo, before)
	}
	return conversationSearchQuery, []any{match, num << seqBits, num<<seqBits | (before - 1), sq.Limit + 1, sq.ConversationID}, nil
}

// conversationSearchQuery reads a docid range of the index newest first
// (searchQuery's arguments: the match, the range, the rows, the
// conversation).
var conversationSearchQuery = `SELECT ` + prefixed("m.", messageColumns) + `
	FROM (SELECT docid FROM message_search
		WHERE message_search MATCH ? AND docid BETWEEN ? AND ?
		ORDER BY docid DESC LIMIT ?) hit
	CROSS JOIN messages m ON m.conversation_id = ? AND m.seq_no = (hit.docid & 4294967295)
	ORDER BY m.seq_no DESC`

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
			CROSS JOIN search_convs s ON s.num = q.docid >> 32
			CROSS JOIN messages m ON m.conversation_id = s.conversation_id AND m.seq_no = (q.docid & 4294967295)
			WHERE m.content <> '' AND m.kind = ''`); err != nil {
			return fmt.Errorf("index messages for search: %w", err)
		}
		if err := indexMembershipLines(ctx, tx); err != nil {
			return err
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
	words := searchwords.Query(query)
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
