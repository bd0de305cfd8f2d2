package localstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/chatterm/chat/wire"
)

// maxSearchSeq is the first seq_no a docid cannot hold (migration 0010):
// such a message is not searchable.
const maxSearchSeq = 1 << seqBits

// The statements that queue a commit's messages for the search index
// (migration 0013 says why they are not triggers). Each reads the commit's
// messages from one argument, a JSON array of [conversation_id, seq_no,
// line] (line 1: a membership line, which waits in a queue of its own,
// migration 0012), so that a commit of any size is the same few statements,
// each compiled once into the connection's statement cache.
const (
	queueSearchConvs = `INSERT OR IGNORE INTO search_convs (conversation_id)
		SELECT DISTINCT j.value ->> 0 FROM json_each(?) j ORDER BY 1`
	queueSearchTexts = `INSERT OR IGNORE INTO search_queue (docid)
		SELECT c.num << 32 | (j.value ->> 1)
		FROM json_each(?) j CROSS JOIN search_convs c ON c.conversation_id = j.value ->> 0
		WHERE j.value ->> 2 = 0`
	queueSearchLines = `INSERT OR IGNORE INTO search_line_queue (docid)
		SELECT c.num << 32 | (j.value ->> 1)
		FROM json_each(?) j CROSS JOIN search_convs c ON c.conversation_id = j.value ->> 0
		WHERE j.value ->> 2 = 1`
)

// queueForSearch queues the messages tx has just stored (every one new to
// the cache) for the search index, in the transaction that stores them, so
// that no stored message escapes the index and none is queued twice. A
// message with text and a membership line are searchable; other events, and
// messages stored without text (deleted), are not. An unsearched cache
// (Options.Unsearched) queues nothing.
func (s *Store) queueForSearch(ctx context.Context, tx *sql.Tx, stored []wire.Message) error {
	if s.unsearchedCache {
		return nil
	}
	var list []byte
	lines := false
	for _, m := range stored {
		line := wire.IsMembershipKind(m.Kind)
		if m.SeqNo >= maxSearchSeq || !line && (m.Kind != "" || cachedContent(m) == "") {
			continue
		}
		if list == nil {
			list = append(make([]byte, 0, 64*len(stored)), '[')
		} else {
			list = append(list, ',')
		}
		// A conversation id is printable ASCII (wire.ValidateConversationID,
		// checked before it was stored), which Go quotes as JSON does.
		list = append(list, '[')
		list = strconv.AppendQuote(list, m.ConversationID)
		list = append(list, ',')
		list = strconv.AppendInt(list, m.SeqNo, 10)
		if line {
			list = append(list, ",1]"...)
			lines = true
		} else {
			list = append(list, ",0]"...)
		}
	}
	if list == nil {
		return nil
	}
	list = append(list, ']')
	arg := string(list)
	stmts := []string{queueSearchConvs, queueSearchTexts}
	if lines {
		stmts = append(stmts, queueSearchLines)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, arg); err != nil {
			return fmt.Errorf("queue messages for search: %w", err)
		}
	}
	return nil
}
