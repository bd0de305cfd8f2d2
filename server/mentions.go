package server

import (
	"context"
	"fmt"
	"slices"

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

// checkGroupMentions refuses (forbidden) the sends (indexes into out) that
// use @all or @here in a group that keeps them for its admins, when userID
// is not one; it returns the sends still to store. The setting is read only
// for a send that holds one of them, so other sends cost nothing more.
// Refused rather than stored as plain text: the sender learns at once that
// nobody was notified, and keeps the draft.
func (s *Service) checkGroupMentions(ctx context.Context, userID, convID string, reqs []wire.SendRequest, valid []int, out []SendResult) []int {
	if !isGroup(convID) {
		return valid
	}
	var checked, allowed bool
	kept := valid[:0:0]
	for _, k := range valid {
		req := reqs[k]
		if req.Kind != "" || !groupMention(req.Content) {
			kept = append(kept, k)
			continue
		}
		if !checked {
			checked = true
			var err error
			if allowed, err = s.mayMentionAll(ctx, userID, convID); err != nil {
				out[k] = SendResult{Err: err}
				checked = false
				continue
			}
		}
		if !allowed {
			out[k] = SendResult{Err: wire.Errorf(wire.CodeMentionAllAdminsOnly, "only the admins of %s may use @all or @here; send it without them", convID)}
			continue
		}
		kept = append(kept, k)
	}
	return kept
}

func groupMention(content string) bool {
	names := wire.MentionTokens(content)
	return slices.Contains(names, wire.MentionAll) || slices.Contains(names, wire.MentionHere)
}

// mayMentionAll says whether userID may use @all and @here in the group.
func (s *Service) mayMentionAll(ctx context.Context, userID, convID string) (bool, error) {
	adminsOnly, err := s.store.MentionAllAdminsOnly(ctx, convID)
	if err != nil {
		return false, s.internal("read mention setting", err)
	}
	if !adminsOnly {
		return true, nil
	}
	p, err := s.requireMember(ctx, userID, convID)
	if err != nil {
		return false, err
	}
	return s.isAdmin(ctx, convID, p)
}

// MentionSetting is GET /v1/conversations/{id}/mentions: members only.
func (s *Service) MentionSetting(ctx context.Context, userID, convID string) (wire.MentionSetting, error) {
	if _, err := s.requireMember(ctx, userID, convID); err != nil {
		return wire.MentionSetting{}, err
	}
	if !isGroup(convID) {
		return wire.MentionSetting{}, nil
	}
	on, err := s.store.MentionAllAdminsOnly(ctx, convID)
	if err != nil {
		return wire.MentionSetting{}, s.internal("read mention setting", err)
	}
	return wire.MentionSetting{AllAdminsOnly: on}, nil
}

// SetMentionSetting is PUT /v1/conversations/{id}/mentions: group admins
// only.
func (s *Service) SetMentionSetting(ctx context.Context, userID, convID string, set wire.MentionSetting) (wire.MentionSetting, error) {
	p, err := s.requireMember(ctx, userID, convID)
	if err != nil {
		return wire.MentionSetting{}, err
	}
	if !isGroup(convID) {
		return wire.MentionSetting{}, wire.Errorf(wire.CodeInvalid, "a direct conversation has no @all to restrict")
	}
	if admin, err := s.isAdmin(ctx, convID, p); err != nil {
		return wire.MentionSetting{}, err
	} else if !admin {
		return wire.MentionSetting{}, wire.Errorf(wire.CodeForbidden, "only group admins change who may use @all")
	}
	if err := s.store.SetMentionAllAdminsOnly(ctx, convID, set.AllAdminsOnly); err != nil {
		return wire.MentionSetting{}, s.notFoundOr(err, "conversation", convID)
	}
	return set, nil
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

// pushesMention says whether an offline user's push for m is a mention: by
// id or @all. @here is meant for those online, so it pushes as any message.
func pushesMention(m Message, user string) bool {
	if m.SenderID == user {
		return false
	}
	return slices.Contains(m.Mentions, user) || slices.Contains(m.Mentions, wire.MentionAll)
}

// maxMentionConversations bounds the conversations one page of mentions looks
// through: the most recently active, as the inbox orders them.
const maxMentionConversations = 500

// Mentions lists the messages mentioning userID across their conversations,
// newest first, after the cursor (zero: from now), up to limit
// (ListMentions).
func (s *Service) Mentions(ctx context.Context, userID string, after wire.MentionCursor, limit int) (wire.MentionsResponse, error) {
	if err := s.allow(ctx, "history", userID, s.cfg.Limits.History); err != nil {
		return wire.MentionsResponse{}, err
	}
	if limit == 0 {
		limit = wire.DefaultPageSize
	}
	if limit < 1 || limit > wire.MaxMentionsPage {
		return wire.MentionsResponse{}, wire.Errorf(wire.CodeInvalid, "limit must be between 1 and %d", wire.MaxMentionsPage)
	}
	page, more, err := ListMentions(ctx, s.store, userID, after, limit)
	if err != nil {
		return wire.MentionsResponse{}, s.internal("read mentions", err)
	}
	if err := s.hydrate(ctx, page); err != nil {
		return wire.MentionsResponse{}, s.internal("read mentions", err)
	}
	resp := wire.MentionsResponse{Mentions: make([]wire.Message, 0, len(page))}
	for _, m := range page {
		resp.Mentions = append(resp.Mentions, wireMessage(m))
	}
	if more {
		last := page[len(page)-1]
		resp.Next = mentionCursor(last).String()
		resp.NextBefore = last.Timestamp
	}
	return resp, nil
}

// mentionCursor is the place of m in the list of mentions.
func mentionCursor(m Message) wire.MentionCursor {
	return wire.MentionCursor{Time: m.Timestamp, ConversationID: m.ConversationID, SeqNo: m.SeqNo}
}

// MentionSource is what ListMentions reads of a Store.
type MentionSource interface {
	Inbox(ctx context.Context, userID string, limit int) ([]InboxEntry, error)
	ListMessagesAfter(ctx context.Context, convID string, afterSeq int64, limit int) ([]Message, error)
}

// ListMentions is a page of the messages mentioning userID, newest first
// by (time, conversation id, seq_no), those after the cursor only, and
// whether more follow. It reads the user's inbox entries (a query on the
// participants index, never a scan), whose MentionSeqs say where the
// mentions are, then those messages by key, newest first in each
// conversation, merging the conversations until the page is full: a page
// costs one read per conversation with mentions and one per message listed.
// Exported for the stores' conformance suite (storetest), which pages it
// on every backend.
func ListMentions(ctx context.Context, src MentionSource, userID string, after wire.MentionCursor, limit int) ([]Message, bool, error) {
	entries, err := src.Inbox(ctx, userID, maxMentionConversations)
	if err != nil {
		return nil, false, fmt.Errorf("read inbox: %w", err)
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
			msgs, err := src.ListMessagesAfter(ctx, w.conv, seq-1, 1)
			if err != nil {
				return fmt.Errorf("read mention %s/%d: %w", w.conv, seq, err)
			}
			if len(msgs) == 0 || msgs[0].SeqNo != seq || msgs[0].Deleted || !mentionsMember(msgs[0], userID) {
				continue
			}
			if !after.Before(msgs[0].Timestamp, w.conv, seq) {
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
			return nil, false, err
		}
		if w.head != nil {
			walks = append(walks, w)
		}
	}
	// newer orders two heads as the list does: by time, then conversation
	// id, then seq_no, all descending, so a page ends at a unique place.
	newer := func(a, b *Message) bool {
		return mentionCursor(*a).Before(b.Timestamp, b.ConversationID, b.SeqNo)
	}
	var page []Message
	for len(page) < limit {
		var top *walk
		for _, w := range walks {
			if w.head != nil && (top == nil || newer(w.head, top.head)) {
				top = w
			}
		}
		if top == nil {
			break
		}
		page = append(page, *top.head)
		if err := next(top); err != nil {
			return nil, false, err
		}
	}
	more := len(page) == limit && slices.ContainsFunc(walks, func(w *walk) bool { return w.head != nil })
	return page, more, nil
}
