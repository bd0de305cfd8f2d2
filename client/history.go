package client

import (
	"context"
	"errors"
	"slices"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// Page is one page of a conversation's history, oldest first (display order).
type Page struct {
	Messages []wire.Message
	// More: older messages may exist before Messages[0].
	More bool
	// Pending holds the messages typed here and not yet stored by the server,
	// oldest first, with seq_no 0 and the local time; only on the newest page.
	// Those the server refused for good are there too, their reason in Refused.
	Pending []wire.Message
	// Refused gives, by message_id, why the server refused a Pending message
	// (too long, not a member...): it stays for the user to see, never resent.
	Refused map[string]string
	// Stale: the server could not be asked, so the page is what the cache had
	// (it may have gaps).
	Stale bool
}

// History returns up to limit messages with seq_no below beforeSeq (0: the
// newest). It answers from the cache when the cache holds the whole page, and
// otherwise asks the server (before_seq paging) and keeps the answer in the
// cache. Offline, it returns what the cache has with Stale set.
func (s *Session) History(ctx context.Context, conversationID string, beforeSeq int64, limit int) (Page, error) {
	if err := wire.ValidateConversationID(conversationID); err != nil {
		return Page{}, err
	}
	if limit <= 0 {
		limit = wire.DefaultPageSize
	}
	limit = min(limit, wire.MaxPageSize)
	// The outbox is read before the messages: a sent answer committing
	// between the two reads moves a message from the outbox to the messages,
	// and read the other way round the page would hold it in neither (a chat
	// reopened by a restore while its resends were answered lost one from the
	// screen). Read this way it is in both, and the screen keeps the stored one.
	var pending []wire.Message
	var refused map[string]string
	if beforeSeq <= 0 {
		out, err := s.store.Outbox(ctx, conversationID)
		if err != nil {
			return Page{}, err
		}
		for _, e := range out {
			if e.Kind != "" {
				continue // an event waiting to go is not a message to show
			}
			pending = append(pending, wire.Message{ConversationID: e.ConversationID, MessageID: e.MessageID,
				SenderID: s.self, Content: e.Content, Attachment: e.Attachment, AttachmentInfo: e.AttachmentInfo, ReplyTo: e.ReplyTo, Timestamp: e.CreatedAt})
			if e.Err != nil {
				if refused == nil {
					refused = map[string]string{}
				}
				refused[e.MessageID] = wire.ErrorMessage(e.Err)
			}
		}
	}
	if s.historyHook != nil {
		s.historyHook()
	}
	cached, err := s.store.Messages(ctx, conversationID, beforeSeq, limit)
	if err != nil {
		return Page{}, err
	}
	var p Page
	if s.complete(ctx, conversationID, beforeSeq, limit, cached) {
		p = Page{Messages: cached, More: len(cached) > 0 && cached[len(cached)-1].SeqNo > 1}
	} else {
		resp, err := s.api.History(ctx, conversationID, beforeSeq, limit)
		switch {
		case err == nil:
			if _, err := s.store.PutMessages(ctx, resp.Messages...); err != nil {
				return Page{}, err
			}
			p = Page{Messages: resp.Messages, More: resp.NextBeforeSeq > 0}
		case IsNetError(err) || wire.ErrorCode(err).Retryable():
			p = Page{Messages: cached, More: len(cached) > 0 && cached[len(cached)-1].SeqNo > 1, Stale: true}
		default:
			return Page{}, err
		}
	}
	slices.Reverse(p.Messages)
	p.Pending, p.Refused = pending, refused
	return p, nil
}

// complete reports whether a cached page (newest first) is the whole page the
// server would give: contiguous, starting right below beforeSeq (or at the
// newest message we know of), and either full or reaching seq_no 1.
func (s *Session) complete(ctx context.Context, conv string, beforeSeq int64, limit int, cached []wire.Message) bool {
	if len(cached) == 0 {
		return false
	}
	top := beforeSeq - 1
	if beforeSeq <= 0 {
		e, err := s.store.InboxEntry(ctx, conv)
		if err != nil {
			return false
		}
		// Below our cursor nothing is missing; above it, the server may have more.
		cur, ok, err := s.store.Cursor(ctx, conv)
		if err != nil || !ok || cur < e.LastSeq {
			return false
		}
		top = e.LastSeq
	}
	if cached[0].SeqNo != top {
		return false
	}
	for i := 1; i < len(cached); i++ {
		if cached[i].SeqNo != cached[i-1].SeqNo-1 {
			return false
		}
	}
	return len(cached) == limit || cached[len(cached)-1].SeqNo == 1
}

// Inbox returns the cached inbox, most recent activity first.
func (s *Session) Inbox(ctx context.Context, limit int) ([]wire.InboxEntry, error) {
	return s.store.Inbox(ctx, limit)
}

// Conversation asks the server for a conversation with its participants and
// records it in the cache (group ticks need every member).
func (s *Session) Conversation(ctx context.Context, id string) (wire.Conversation, error) {
	c, err := s.api.Conversation(ctx, id)
	if err != nil {
		return c, err
	}
	if err := s.store.PutConversation(ctx, c); err != nil {
		return c, err
	}
	return c, nil
}

// CreateDirect finds or creates the direct conversation with peer.
func (s *Session) CreateDirect(ctx context.Context, peer string) (wire.Conversation, error) {
	c, err := s.api.Direct(ctx, peer)
	if err != nil {
		return c, err
	}
	return c, s.store.PutConversation(ctx, c)
}

// CreateGroup creates a group of the caller and members.
func (s *Session) CreateGroup(ctx context.Context, name string, members []string) (wire.Conversation, error) {
	c, err := s.api.CreateConversation(ctx, wire.CreateConversationRequest{Type: wire.Group, Name: name, Members: members})
	if err != nil {
		return c, err
	}
	return c, s.store.PutConversation(ctx, c)
}

// RefreshStatus asks the server for every member's boundaries in a
// conversation and records them, e.g. when the conversation is opened.
func (s *Session) RefreshStatus(ctx context.Context, conversationID string) ([]wire.MemberStatus, error) {
	resp, err := s.api.Status(ctx, conversationID)
	if err != nil {
		return nil, err
	}
	for _, st := range resp.Members {
		if _, err := s.store.ApplyStatus(ctx, conversationID, st); err != nil {
			return nil, err
		}
	}
	return s.store.Statuses(ctx, conversationID)
}

// Discard drops a refused (or any) message from the outbox.
func (s *Session) Discard(ctx context.Context, messageID string) error {
	err := s.store.Discard(ctx, messageID)
	if errors.Is(err, localstore.ErrNotFound) {
		return nil
	}
	s.refreshUnsent(ctx)
	return err
}
