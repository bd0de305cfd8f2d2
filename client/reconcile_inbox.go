package client

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// inboxPage is how many conversations the first pass of a reconciliation
// asks the inbox for: the server's largest page.
const inboxPage = 500

// outOfStep narrows convs, the cached conversations to reconcile, to those
// the inbox does not show in step with the cache, for one inbox request
// instead of two history requests per conversation. A conversation is in
// step when the server's newest message (the inbox's last_seq, sender and
// time) is the cache's newest: a store that went back numbers its new
// messages from the backup again, so a cached top still on the server at
// its number, with its sender and time, means nothing cached above the
// backup was lost. Anything else is reconciled in full: a conversation the
// inbox does not list (past its page, left), a newest that is an event (the
// inbox's preview is of the last message), a cache with more or less than
// the server. If the inbox cannot be read, every conversation is.
func (s *Session) outOfStep(ctx context.Context, convs []string) []string {
	in, err := s.api.Inbox(ctx, inboxPage)
	if err != nil {
		s.log.Info("reconcile: inbox unread; comparing every conversation", "err", err)
		return convs
	}
	if in.Stale {
		// An offline copy's newest messages may be behind the server's.
		s.log.Info("reconcile: the inbox is an offline copy; comparing every conversation")
		return convs
	}
	server := make(map[string]wire.InboxEntry, len(in.Conversations))
	for _, c := range in.Conversations {
		server[c.ConversationID] = c
	}
	var out []string
	for _, conv := range convs {
		if !s.topInStep(ctx, conv, server) {
			out = append(out, conv)
		}
	}
	return out
}

func (s *Session) topInStep(ctx context.Context, conv string, server map[string]wire.InboxEntry) bool {
	c, ok := server[conv]
	if !ok {
		return false
	}
	top, err := s.store.LatestSeq(ctx, conv)
	if err != nil || top != c.LastSeq || top == 0 {
		return false
	}
	msgs, err := s.store.MessagesAfter(ctx, conv, top-1, 1)
	if err != nil || len(msgs) != 1 || msgs[0].SeqNo != top {
		return false
	}
	m := msgs[0]
	return m.Kind == "" && m.SenderID == c.LastMessageSender && m.Timestamp.Equal(c.LastMessageAt)
}
