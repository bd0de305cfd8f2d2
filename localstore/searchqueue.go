package localstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/chatterm/chat/wire"
)

// maxSearchSeq is the first seq_no a docid cannot hold (migration 0010):
// such a message is not searchable.
const maxSearchSeq = 1 << seqBits

// The statements that queue a commit's messages for the search index
// (migration 0013 says why they are not triggers). The docids, computed
// here, come as one argument, a JSON array, so that a commit of any size is
// one statement, compiled once into the connection's statement cache.
const (
	queueSearchTexts = `INSERT OR IGNORE INTO search_queue (docid) SELECT value FROM json_each(?)`
	queueSearchLines = `INSERT OR IGNORE INTO search_line_queue (docid) SELECT value FROM json_each(?)`
)

// searchNums remembers the conversations' numbers in the index's docids
// (search_convs): a number, once committed, never changes (the table's
// rows are never updated or deleted), so it is looked up once a process.
type searchNums struct {
	mu   sync.Mutex
	nums map[string]int64
}

// searchNum is the number of conv in the index's docids, numbering it in tx
// if it has none yet. Only a number read as committed before tx is
// remembered for the process: one given in tx is gone if tx rolls back. A
// number given in tx is kept in fresh (the transaction's own) instead: the
// SELECT inside tx sees it too, and caching what it read would keep a number
// that a rollback hands to the next new conversation. The cache has one
// connection, so a row the SELECT finds that tx did not insert is committed.
func (s *Store) searchNum(ctx context.Context, tx *sql.Tx, conv string, fresh map[string]int64) (int64, error) {
	if num, ok := fresh[conv]; ok {
		return num, nil
	}
	s.searchNums.mu.Lock()
	num, ok := s.searchNums.nums[conv]
	s.searchNums.mu.Unlock()
	if ok {
		return num, nil
	}
	err := tx.QueryRowContext(ctx, `SELECT num FROM search_convs WHERE conversation_id = ?`, conv).Scan(&num)
	if errors.Is(err, sql.ErrNoRows) {
		if err = tx.QueryRowContext(ctx, `INSERT INTO search_convs (conversation_id) VALUES (?) RETURNING num`, conv).Scan(&num); err != nil {
			return 0, err
		}
		fresh[conv] = num
		return num, nil
	}
	if err != nil {
		return 0, err
	}
	s.searchNums.mu.Lock()
	if s.searchNums.nums == nil {
		s.searchNums.nums = map[string]int64{}
	}
	s.searchNums.nums[conv] = num
	s.searchNums.mu.Unlock()
	return num, nil
}

// queueForSearch queues the messages tx has just stored (every one new to
// the cache) for the search index, in the transaction that stores them, so
// that no stored message escapes the index and none is queued twice. A
// message with text and a membership line (in a queue of its own,
// migration 0012) are searchable; other events, and messages stored
// without text (deleted), are not. An unsearched cache (Options.Unsearched)
// queues nothing.
func (s *Store) queueForSearch(ctx context.Context, tx *sql.Tx, stored []wire.Message) error {
	if s.unsearchedCache {
		return nil
	}
	var texts, lines []byte
	conv, num := "", int64(0)   // the last conversation's: a commit is mostly of one
	fresh := map[string]int64{} // numbered in tx (searchNum)
	for _, m := range stored {
		line := wire.IsMembershipKind(m.Kind)
		if m.SeqNo >= maxSearchSeq || !line && (m.Kind != "" || cachedContent(m) == "") {
			continue
		}
		if m.ConversationID != conv {
			var err error
			if num, err = s.searchNum(ctx, tx, m.ConversationID, fresh); err != nil {
				return fmt.Errorf("queue messages for search: number %s: %w", m.ConversationID, err)
			}
			conv = m.ConversationID
		}
		docid := num<<seqBits | m.SeqNo
		if line {
			lines = appendDocid(lines, docid)
		} else {
			texts = appendDocid(texts, docid)
		}
	}
	for _, q := range []struct {
		stmt string
		list []byte
	}{{queueSearchTexts, texts}, {queueSearchLines, lines}} {
		if q.list == nil {
			continue
		}
		if _, err := tx.ExecContext(ctx, q.stmt, string(append(q.list, ']'))); err != nil {
			return fmt.Errorf("queue messages for search: %w", err)
		}
	}
	return nil
}

// appendDocid adds docid to a JSON array being written (nil: not begun).
func appendDocid(list []byte, docid int64) []byte {
	if list == nil {
		list = append(make([]byte, 0, 256), '[')
	} else {
		list = append(list, ',')
	}
	return strconv.AppendInt(list, docid, 10)
}
