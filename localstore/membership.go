package localstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/chatterm/chat/wire"
)

// A membership event's users (wire.Message.Members) are cached in its row's
// content, separated by spaces (user ids have none), as the server keeps
// them: the event needs no column that no other row has, and a cache made
// before protocol 3 reads the same.

// cachedContent is what m's content column holds.
func cachedContent(m wire.Message) string {
	if len(m.Members) > 0 && wire.IsMembershipKind(m.Kind) {
		return strings.Join(m.Members, " ")
	}
	return m.Content
}

// fromCachedContent gives a membership event read back its users again.
func fromCachedContent(m *wire.Message) {
	switch m.Kind {
	case wire.KindAdded, wire.KindRemoved, wire.KindAdminGranted, wire.KindAdminRevoked:
		m.Members, m.Content = strings.Fields(m.Content), ""
	}
}

// applyMembership brings the cached members of ev's conversation (whose
// boundaries hold back its ticks) and its name in line with a membership
// event newer than anything the cache had of the conversation; an older one
// (a page of history fetched later) is history, and changes nothing now.
// self (the cache's user) leaving takes the conversation out of the inbox,
// coming back puts it in again (markLeft).
func applyMembership(ctx context.Context, tx *sql.Tx, self string, ev wire.Message) error {
	var err error
	switch ev.Kind {
	case wire.KindAdded, wire.KindJoined:
		joining := ev.Members
		if ev.Kind == wire.KindJoined {
			joining = []string{ev.SenderID}
		}
		for _, u := range joining {
			if _, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO member_status (conversation_id, user_id) VALUES (?, ?)`, ev.ConversationID, u); err != nil {
				break
			}
		}
		if err == nil && slices.Contains(joining, self) {
			err = markLeft(ctx, tx, ev.ConversationID, 0, ev.SeqNo)
		}
	case wire.KindRemoved, wire.KindLeft:
		leaving := ev.Members
		if ev.Kind == wire.KindLeft {
			leaving = []string{ev.SenderID}
		}
		for _, u := range leaving {
			if _, err = tx.ExecContext(ctx, `DELETE FROM member_status WHERE conversation_id = ? AND user_id = ?`, ev.ConversationID, u); err != nil {
				break
			}
		}
		if err == nil && slices.Contains(leaving, self) {
			err = markLeft(ctx, tx, ev.ConversationID, ev.SeqNo, ev.SeqNo)
		}
	case wire.KindRenamed:
		_, err = tx.ExecContext(ctx, `UPDATE inbox SET name = ? WHERE conversation_id = ?`, ev.Content, ev.ConversationID)
	}
	if err != nil {
		return fmt.Errorf("apply %s %d: %w", ev.Kind, ev.SeqNo, err)
	}
	return nil
}
