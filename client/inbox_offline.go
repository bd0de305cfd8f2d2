package client

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// offlineInbox takes from a stale inbox answer (the server's offline copy,
// given while its store cannot be read: docs/reliability.md) only what cannot
// undo anything the cache knows: the conversations the cache does not list.
// The copy is as old as the user's last inbox read, so it may be behind the
// cache (previews, boundaries, unread counts), and it lacks conversations
// joined since: forgetting what it does not list, as a complete answer allows,
// would take those out of the inbox. The next connect reads the inbox again.
func (s *Session) offlineInbox(ctx context.Context, cached []string, resp wire.InboxResponse) {
	have := make(map[string]bool, len(cached))
	for _, id := range cached {
		have[id] = true
	}
	var add []wire.InboxEntry
	for _, e := range resp.Conversations {
		if !have[e.ConversationID] && (s.cfg.Filter == nil || s.cfg.Filter(e.ConversationID)) {
			add = append(add, e)
		}
	}
	s.log.Info("the server's inbox is an offline copy (its store is out): the cache is kept", "listed", len(resp.Conversations), "added", len(add))
	if len(add) > 0 {
		if err := s.store.PutInbox(ctx, add...); err != nil {
			s.log.Warn("store inbox", "err", err)
			return
		}
	}
	s.emit(ctx, InboxEvent{Offline: true})
}
