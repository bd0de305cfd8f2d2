package client

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// Read reports go like acks: a view that marks each message read as it
// shows it (200 a second in a busy chat) tells the server once per
// SessionConfig.AckDelay, with the newest boundary of each conversation,
// instead of once per message. A read frame is cumulative, so the last one
// says all the others did; the sender's blue ticks move at most AckDelay
// later.

// queueRead records a read boundary to tell the server, and sends what is
// waiting after AckDelay (at once when it is negative). Without a connection
// it waits for the next one, which sends it on connect.
func (s *Session) queueRead(ctx context.Context, conversationID string, seq int64) {
	s.mu.Lock()
	s.reads[conversationID] = max(s.reads[conversationID], seq)
	if s.link == nil || s.readFlushArmed {
		s.mu.Unlock()
		return
	}
	if s.cfg.AckDelay < 0 {
		s.mu.Unlock()
		s.flushReads(ctx)
		return
	}
	s.readFlushArmed = true
	s.mu.Unlock()
	s.after(s.cfg.AckDelay, func() { s.flushReads(context.Background()) })
}

// flushReads sends every waiting read boundary on the live connection; what
// cannot be sent waits for the next one.
func (s *Session) flushReads(ctx context.Context) {
	s.mu.Lock()
	s.readFlushArmed = false
	l := s.link
	if l == nil || len(s.reads) == 0 {
		s.mu.Unlock()
		return
	}
	due := s.reads
	s.reads = map[string]int64{}
	s.mu.Unlock()
	for conv, seq := range due {
		if l.push(ctx, wire.Frame{Type: wire.TypeRead, ConversationID: conv, SeqNo: seq}) {
			delete(due, conv)
		}
	}
	if len(due) == 0 {
		return
	}
	s.mu.Lock()
	for conv, seq := range due {
		s.reads[conv] = max(s.reads[conv], seq)
	}
	s.mu.Unlock()
}

// resendReads tells the server the read boundaries the cache holds beyond
// what its inbox says: reports that waited in memory when the last process
// ended (quit within AckDelay of a read, or while offline) are not lost with
// it, since the cache has them.
func (s *Session) resendReads(ctx context.Context, server []wire.InboxEntry) {
	cached, err := s.store.Inbox(ctx, 0)
	if err != nil {
		s.log.Warn("read the cached inbox", "err", err)
		return
	}
	read := make(map[string]int64, len(cached))
	for _, e := range cached {
		read[e.ConversationID] = e.LastReadSeq
	}
	for _, e := range server {
		if mine := read[e.ConversationID]; mine > e.LastReadSeq {
			s.queueRead(ctx, e.ConversationID, mine)
		}
	}
}
