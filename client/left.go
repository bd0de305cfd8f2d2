package client

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// cachedInboxIDs is the conversations the cache lists, read before the
// server's inbox is asked for (forgetUnlisted).
func (s *Session) cachedInboxIDs(ctx context.Context) []string {
	es, err := s.store.Inbox(ctx, 0)
	if err != nil {
		s.log.Info("read cached inbox", "err", err)
		return nil
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ConversationID
	}
	return ids
}

// forgetUnlisted takes out of the cached inbox the conversations cached
// before the server's inbox was read that a complete answer (fewer than
// asked for) does not list: the user left them while this device was
// offline, and the server gives a former member no event to say so.
func (s *Session) forgetUnlisted(ctx context.Context, cached []string, resp wire.InboxResponse, asked int) {
	if len(resp.Conversations) >= asked || len(cached) == 0 {
		return
	}
	listed := make([]string, len(resp.Conversations))
	for i, e := range resp.Conversations {
		listed[i] = e.ConversationID
	}
	n, err := s.store.MarkLeftUnlisted(ctx, cached, listed)
	if err != nil {
		s.log.Warn("forget left conversations", "err", err)
		return
	}
	if n > 0 {
		s.log.Info("left while offline; out of the inbox", "conversations", n)
	}
}
