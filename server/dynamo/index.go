package dynamo

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
)

// The participants index (by_user_activity) orders a user's inbox. Moving
// every member's entry with every message cost 4 WCU a member (2 in the
// send transaction, 2 for the index's delete and put), the largest part of
// a message's cost. So the entries move after the commit, as follow-up writes
// retried until done, and only when the conversation's entries were last
// moved (by this node) more than Options.InboxIndexLag before the message:
// a conversation's burst of messages moves them once. Every member's entry is
// then at most InboxIndexLag behind the conversation's last message (once a
// message's follow-up writes are done), and Inbox, which reads the
// conversations anyway, reads that much further down the index and orders
// by the conversations' own last_message_at: the order it returns is exact.

// indexMoves remembers, per conversation, the newest message time this
// node moved the members' index entries to.
type indexMoves struct {
	mu sync.Mutex
	at map[string]int64
}

// fresh says whether the entries are known to be within lag of ts.
func (x *indexMoves) fresh(conv string, ts, lag int64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	at, ok := x.at[conv]
	return ok && at > ts-lag
}

// moved records that every member's entry is at ts or later, dropping
// entries too old to spare any write once there are many.
func (x *indexMoves) moved(conv string, ts, lag int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.at == nil {
		x.at = map[string]int64{}
	}
	if len(x.at) >= 100_000 {
		for c, at := range x.at {
			if at <= ts-lag {
				delete(x.at, c)
			}
		}
	}
	x.at[conv] = max(x.at[conv], ts)
}

// moveIndex moves members' index entries to m's time, unless this node moved
// them less than InboxIndexLag before it. m is stored: a failure here only
// retries in the background (untilDone).
func (s *Store) moveIndex(ctx context.Context, m server.Message, members []string) {
	ts, lag := ns(m.Timestamp), int64(s.o.InboxIndexLag)
	if ts == 0 || s.idx.fresh(m.ConversationID, ts, lag) {
		return
	}
	var writes []planned
	for _, u := range members {
		writes = append(writes, planned{kind: kindActivity, user: u, tx: types.TransactWriteItem{Update: s.activityUpdate(m, u)}})
	}
	s.untilDone(ctx, m, "its members' inbox index entries", func(ctx context.Context) error {
		if err := s.applyLater(ctx, m, writes); err != nil {
			return err
		}
		s.idx.moved(m.ConversationID, ts, lag)
		return nil
	})
}

// DefaultInboxIndexLag is Options.InboxIndexLag's default.
const DefaultInboxIndexLag = time.Hour

// inboxSlack bounds how many index entries past the limit Inbox reads to
// reorder (a user with more conversations active within InboxIndexLag of
// the last one shown may see the tail of the page slightly out of order).
const inboxSlack = 500
