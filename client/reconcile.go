package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// Reconciling the cache with a server whose store was restored from a backup
// or rolled back (docs/protocol.md, "Store identity"). Such a server lacks
// what was stored after the backup and numbers new messages from there
// again, so the cache may hold messages the server lost under numbers it now
// gives to others. Two signs: the hello's store_id differs from the one the
// cache was last in step with, or a message arrives under a seq_no the cache
// holds another message_id under. Either way each conversation is compared
// with the server's history, newest first, from the top of the cache down to
// where they agree; what the server no longer has leaves the cache, the
// account's own lost messages go back to the outbox, and the cursor and
// boundaries go back to where cache and server agree, so the next sync
// fetches what the server has.

// checkStore reconciles the cache when the server's store id is not the one
// the cache was last in step with. A server that says none (older than store
// ids) is taken as it is. A cache that recorded none is reconciled too, and
// quietly unless it held something the server lost: it may have been filled
// by a client older than store ids from a store since restored (a new cache
// has nothing to compare, and costs nothing).
func (s *Session) checkStore(ctx context.Context, storeID string) error {
	if storeID == "" {
		return nil
	}
	known, err := s.store.StoreID(ctx)
	if err != nil {
		return err
	}
	if known == storeID {
		return nil
	}
	convs, err := s.store.CachedConversations(ctx)
	if err != nil {
		return err
	}
	if known != "" {
		s.log.Warn("the server's store was restored or rolled back; reconciling the cache", "was", known, "now", storeID, "conversations", len(convs))
	}
	if len(convs) > 0 {
		convs = s.outOfStep(ctx, convs)
	}
	ev, err := s.reconcile(ctx, convs)
	if err != nil {
		return fmt.Errorf("reconcile the cache with the server's store %s: %w", storeID, err)
	}
	ev.StoreChanged = known != ""
	if ev.StoreChanged || ev.Lost > 0 {
		s.emit(ctx, ev)
	}
	if s.cfg.Filter != nil {
		// This session saw only some conversations; the others are still
		// to be reconciled by a session that sees them all.
		return nil
	}
	return s.store.SetStoreID(ctx, storeID)
}

// reconcileLive reconciles conversations in which a message came under a
// seq_no the cache holds another message under: the server's store went
// back under this connection (or before a client that does not know store
// ids recorded one). What this connection acked there no longer counts, and
// each conversation is synced again from its lowered cursor, which brings
// the message that conflicted.
// replaced counts the cached messages sent answers already replaced.
func (s *Session) reconcileLive(ctx context.Context, l *link, convs []string, replaced int) error {
	s.log.Warn("a message came under a seq_no held here with another message; reconciling", "conversations", convs)
	ev, err := s.reconcile(ctx, convs)
	if err != nil {
		return fmt.Errorf("reconcile the cache with the server: %w", err)
	}
	ev.Lost += replaced
	for _, conv := range convs {
		if !slices.Contains(ev.Conversations, conv) {
			ev.Conversations = append(ev.Conversations, conv)
		}
	}
	l.ackMu.Lock()
	for _, conv := range convs {
		delete(l.acked, conv)
		delete(l.ackDue, conv)
	}
	l.ackMu.Unlock()
	for _, conv := range convs {
		l.gapped[conv] = true
	}
	// The account's lost messages, back in the outbox, go out on this
	// connection, even one that sent them before the store went back.
	if len(ev.requeued) > 0 {
		s.sendMu.Lock()
		for _, e := range ev.requeued {
			s.mu.Lock()
			delete(l.sent, e.MessageID)
			s.mu.Unlock()
			s.sendOn(ctx, l, e, false)
		}
		s.sendMu.Unlock()
	}
	s.emit(ctx, ev)
	return nil
}

// reconcile brings the given conversations' cache back in step with the
// server and says what changed.
func (s *Session) reconcile(ctx context.Context, convs []string) (RestoredEvent, error) {
	var ev RestoredEvent
	for _, conv := range convs {
		if s.cfg.Filter != nil && !s.cfg.Filter(conv) {
			continue
		}
		res, err := s.reconcileConversation(ctx, conv)
		if err != nil {
			return ev, err
		}
		if len(res.Dropped) == 0 {
			continue
		}
		ev.Conversations = append(ev.Conversations, conv)
		for _, m := range res.Dropped {
			if m.Kind == "" {
				ev.Lost++
			}
		}
		ev.Resent += len(res.Requeued)
		ev.requeued = append(ev.requeued, res.Requeued...)
		s.mu.Lock()
		if r, ok := s.reads[conv]; ok && r > res.Kept {
			s.reads[conv] = res.Kept // a read of a lost message must not pass the new ones
		}
		s.mu.Unlock()
	}
	if ev.Resent > 0 {
		s.refreshUnsent(ctx)
	}
	return ev, nil
}

// reconcilePage is how many messages of the server's history each step of
// the comparison reads.
const reconcilePage = wire.MaxPageSize

func (s *Session) reconcileConversation(ctx context.Context, conv string) (localstore.RollbackResult, error) {
	var none localstore.RollbackResult
	top, err := s.store.LatestSeq(ctx, conv)
	if err != nil {
		return none, err
	}
	newest, err := s.api.History(ctx, conv, 0, 1)
	switch {
	case err == nil:
	case wire.ErrorCode(err) == wire.CodeNotFound:
		// The conversation itself was made after the backup: the server has
		// none of it. (Left, or removed: forbidden, and the cache keeps what
		// it had, as it does for any conversation left.)
		newest = wire.HistoryResponse{}
	case wire.ErrorCode(err) == wire.CodeForbidden:
		s.log.Info("not a member on the restored server; keeping the cache as it is", "conversation", conv)
		return none, nil
	default:
		return none, fmt.Errorf("newest message of %s: %w", conv, err)
	}
	rb := localstore.Rollback{ConversationID: conv}
	if len(newest.Messages) > 0 {
		rb.Last = newest.Messages[0].SeqNo
	}
	lowest, err := s.store.MessagesAfter(ctx, conv, 0, 1)
	if err != nil {
		return none, err
	}
	// Down from the top of what both have, a page at a time, until a page
	// where every cached message is the server's: below the point the store
	// went back to, cache and server agree.
	before := min(top, rb.Last) + 1
	for len(lowest) > 0 && before > lowest[0].SeqNo && rb.Last > 0 {
		page, err := s.api.History(ctx, conv, before, reconcilePage)
		if err != nil {
			return none, fmt.Errorf("history of %s before %d: %w", conv, before, err)
		}
		lo := int64(0) // the page covers (lo, before)
		if page.NextBeforeSeq > 0 && len(page.Messages) > 0 {
			lo = page.Messages[len(page.Messages)-1].SeqNo - 1
		}
		cached, err := s.store.MessagesAfter(ctx, conv, lo, int(before-lo))
		if err != nil {
			return none, err
		}
		server := make(map[int64]wire.Message, len(page.Messages))
		for _, m := range page.Messages {
			server[m.SeqNo] = m
		}
		matched, differ := 0, 0
		for _, c := range cached {
			if c.SeqNo >= before {
				break
			}
			if m, ok := server[c.SeqNo]; ok && m.MessageID == c.MessageID {
				matched++
				rb.Current = append(rb.Current, m)
				continue
			}
			differ++
			rb.Drop = append(rb.Drop, c.SeqNo)
		}
		if lo == 0 || (matched > 0 && differ == 0) {
			break
		}
		before = lo + 1
	}
	res, err := s.store.ApplyRollback(ctx, rb)
	if err != nil {
		return none, err
	}
	if len(res.Dropped) == 0 {
		return res, nil
	}
	s.log.Warn("dropped messages the server no longer has", "conversation", conv, "server_last_seq", rb.Last,
		"dropped", len(res.Dropped), "sent_again", len(res.Requeued), "in_step_up_to", res.Kept)
	// A lost event may have changed a message kept below: it takes the
	// server's state (cached earlier than the comparison reached).
	var targets []int64
	for _, m := range res.Dropped {
		if m.Kind != "" && m.TargetSeq > 0 && m.TargetSeq <= res.Kept {
			targets = append(targets, m.TargetSeq)
		}
	}
	slices.Sort(targets)
	for _, seq := range slices.Compact(targets) {
		page, err := s.api.HistoryAfter(ctx, conv, seq-1, 1)
		if err != nil {
			return none, fmt.Errorf("message %d of %s: %w", seq, conv, err)
		}
		if err := s.store.ResetState(ctx, conv, page.Messages...); err != nil {
			return none, err
		}
	}
	// The members' boundaries went down with the cursor; the server's come
	// back (they only move forward).
	if _, err := s.RefreshStatus(ctx, conv); err != nil {
		s.log.Info("refresh boundaries after reconciling", "conversation", conv, "err", err)
	}
	return res, nil
}
