package server

import (
	"context"
	"slices"
	"time"

	"github.com/chatterm/chat/wire"
)

// Mentions (docs/protocol.md, "Mentions"): resolved here when a message is
// stored, counted by the store in the same write (MessageStore.AppendMessage),
// and read back as InboxEntry.MentionSeqs.

// resolveMentions is what content mentions, as stored with the message: the
// names written as "@id" that are other members of the conversation, and in a
// group @all and @here. Any other name (not a member, the sender, a typo) and
// @all or @here in a direct conversation stay plain text: a mention counts
// for someone, so only names that reach someone are kept. Events resolve
// nothing: an edit keeps the mentions its message was sent with, so the
// counts the first write made are never taken back or made twice.
func resolveMentions(m Message, members []string) []string {
	if m.IsEvent() || m.Content == "" {
		return nil
	}
	var out []string
	explicit := 0
	for _, name := range wire.MentionTokens(m.Content) {
		switch {
		case name == wire.MentionAll || name == wire.MentionHere:
			if !isGroup(m.ConversationID) {
				continue
			}
		case name == m.SenderID || !slices.Contains(members, name):
			continue
		case explicit >= wire.MaxMentions:
			continue
		default:
			explicit++
		}
		out = append(out, name)
	}
	return out
}

// unreadMentions counts the seq_nos after the read boundary, up to
// wire.MaxUnread.
func unreadMentions(seqs []int64, read int64) int64 {
	var n int64
	for _, s := range seqs {
		if s > read {
			n++
		}
	}
	return min(n, wire.MaxUnread)
}

// mentionsMember says whether a stored message mentions user.
func mentionsMember(m Message, user string) bool {
	return wire.MentionsUser(m.Mentions, m.SenderID, user)
}

// maxMentionConversations bounds the conversations one page of mentions looks
// through: the most recently active, as the inbox orders them.
const maxMentionConversations = 500

// Mentions lists the messages mentioning userID across their conversations,
// newest first, sent before `before` (zero: from now), up to limit. It reads
// the user's inbox entries (a query on the participants index, never a scan),
// whose MentionSeqs say where the mentions are, then those messages by key,
// newest first in each conversation, merging the conversations until the page
// is full: a page costs one read per conversation with mentions and one per
// message listed.
func (s *Service) Mentions(ctx context.Context, userID string, before time.Time, limit int) (wire.MentionsResponse, error) {
	if err := s.allow(ctx, "history", userID, s.cfg.Limits.History); err != nil {
		return wire.MentionsResponse{}, err
	}
	if limit == 0 {
		limit = wire.DefaultPageSize
	}
	if limit < 1 || limit > wire.MaxMentionsPage {
		return wire.MentionsResponse{}, wire.Errorf(wire.CodeInvalid, "limit must be between 1 and %d", wire.MaxMentionsPage)
	}
	entries, err := s.store.Inbox(ctx, userID, maxMentionConversations)
	if err != nil {
		return wire.MentionsResponse{}, s.internal("read inbox", err)
	}
	// One cursor per conversation: its mention seq_nos, newest last, and the
	// newest message not yet listed.
	type walk struct {
		conv string
		seqs []int64
		head *Message
	}
	var walks []*walk
	next := func(w *walk) error {
		for len(w.seqs) > 0 {
			seq := w.seqs[len(w.seqs)-1]
			w.seqs = w.seqs[:len(w.seqs)-1]
			msgs, err := s.store.ListMessagesAfter(ctx, w.conv, seq-1, 1)
			if err != nil {
				return err
			}
			if len(msgs) == 0 || msgs[0].SeqNo != seq || msgs[0].Deleted || !mentionsMember(msgs[0], userID) {
				continue
			}
			if !before.IsZero() && !msgs[0].Timestamp.Before(before) {
				continue
			}
			w.head = &msgs[0]
			return nil
		}
		w.head = nil
		return nil
	}
	for _, e := range entries {
		if len(e.MentionSeqs) == 0 {
			continue
		}
		w := &walk{conv: e.Conversation.ID, seqs: slices.Clone(e.MentionSeqs)}
		if err := next(w); err != nil {
			return wire.MentionsResponse{}, s.internal("read mentions", err)
		}
		if w.head != nil {
			walks = append(walks, w)
		}
	}
	var page []Message
	for len(page) < limit {
		var top *walk
		for _, w := range walks {
			if w.head != nil && (top == nil || w.head.Timestamp.After(top.head.Timestamp)) {
				top = w
			}
		}
		if top == nil {
			break
		}
		page = append(page, *top.head)
		if err := next(top); err != nil {
			return wire.MentionsResponse{}, s.internal("read mentions", err)
		}
	}
	if err := s.hydrate(ctx, page); err != nil {
		return wire.MentionsResponse{}, s.internal("read mentions", err)
	}
	resp := wire.MentionsResponse{Mentions: make([]wire.Message, 0, len(page))}
	for _, m := range page {
		resp.Mentions = append(resp.Mentions, wireMessage(m))
	}
	if len(page) == limit && slices.ContainsFunc(walks, func(w *walk) bool { return w.head != nil }) {
		resp.NextBefore = page[len(page)-1].Timestamp
	}
	return resp, nil
}
