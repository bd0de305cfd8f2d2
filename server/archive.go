package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chatterm/chat/wire"
)

// firstArchivePass is how long a node waits after starting before its first
// archiver pass (at most the interval).
const firstArchivePass = time.Minute

// archiveBatch is how many messages one archiver pass moves at most.
const archiveBatch = 500

// coldKey is where an archived message lives in the BlobStore: one key per
// version of it (updated_seq), so an edit that removes the old version's blob
// can never remove the new version's, archived again meanwhile.
func coldKey(m Message) string {
	if m.UpdatedSeq > 0 {
		return fmt.Sprintf("cold/%s/%d-%d.json", m.ConversationID, m.SeqNo, m.UpdatedSeq)
	}
	return fmt.Sprintf("cold/%s/%d.json", m.ConversationID, m.SeqNo)
}

// RunArchiver moves messages older than after to the BlobStore every interval,
// until ctx ends. The blob is written before the table is changed, so a failure
// between the two leaves the message hot, never lost.
func (s *Service) RunArchiver(ctx context.Context, after, interval time.Duration) {
	cold, ok := s.store.(ColdStore)
	if !ok || s.cfg.Blobs == nil {
		s.log.Info("cold tier off: the store or blob storage does not support it")
		return
	}
	// The first pass waits too: a node starts when its clients reconnect all at
	// once, and a pass on an embedded store reads the whole messages table (1.2 s
	// of a CPU on 10M messages), which is no work for that moment.
	first := time.NewTimer(min(interval, firstArchivePass))
	select {
	case <-ctx.Done():
		first.Stop()
		return
	case <-first.C:
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	if l, ok := s.store.(Leaser); ok {
		// Let another node take over now rather than at the lease's expiry.
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := l.ReleaseLease(rctx, archiveLease, s.cfg.NodeID); err != nil {
				s.log.Debug("archiver: release lease", "err", err)
			}
		}()
	}
	for {
		if _, err := s.ArchivePass(ctx, cold, after, interval); errors.Is(err, ErrUnavailable) {
			// The backend's breaker logs the outage once; the next pass retries.
			s.log.Debug("archiver", "err", err)
		} else if err != nil {
			s.log.Warn("archiver", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// archiveLease names the Leaser lease by which the archivers of nodes sharing
// a store take turns.
const archiveLease = "archiver"

// ArchivePass moves every message older than after, batch by batch, and
// reports whether this node ran the pass. On a Store shared by several nodes
// (a Leaser) only the holder of the archiver lease runs it; the holder keeps
// the lease from pass to pass (it lasts 1.5 intervals, renewed before every
// batch), so one node does the archiving, and another takes over once a dead
// holder's lease has expired.
func (s *Service) ArchivePass(ctx context.Context, cold ColdStore, after, interval time.Duration) (bool, error) {
	l, shared := s.store.(Leaser)
	for {
		if shared {
			now := s.cfg.Now()
			held, err := l.TakeLease(ctx, archiveLease, s.cfg.NodeID, now, now.Add(interval+interval/2))
			if err != nil {
				return false, fmt.Errorf("take the archiver lease: %w", err)
			}
			if !held {
				// Another node archives (or took over while this pass ran).
				return false, nil
			}
		}
		n, err := s.ArchiveOnce(ctx, cold, after)
		if n < archiveBatch || err != nil {
			return true, err
		}
	}
}

// ArchiveOnce moves one batch and returns how many messages it moved.
func (s *Service) ArchiveOnce(ctx context.Context, cold ColdStore, after time.Duration) (int, error) {
	msgs, err := cold.ListArchivable(ctx, s.cfg.Now().Add(-after), archiveBatch)
	if err != nil {
		return 0, fmt.Errorf("list archivable: %w", err)
	}
	for i, m := range msgs {
		data, err := json.Marshal(wireMessage(m))
		if err != nil {
			return i, err
		}
		key := coldKey(m)
		if err := s.cfg.Blobs.Put(ctx, key, data, "application/json"); err != nil {
			return i, fmt.Errorf("put %s: %w", key, err)
		}
		if err := cold.MarkArchived(ctx, m, key); errors.Is(err, ErrTargetChanged) {
			// Edited or deleted since it was listed: the blob holds what the
			// message no longer says. The next pass sees it as it is now.
			if derr := s.cfg.Blobs.Delete(ctx, key); derr != nil {
				return i, fmt.Errorf("remove %s, archived as the message changed: %w", key, derr)
			}
			continue
		} else if err != nil {
			return i, fmt.Errorf("mark %s archived: %w", key, err)
		}
		s.metrics.Archived.Inc()
	}
	return len(msgs), nil
}

// hydrate fills in the content of archived messages from the BlobStore; the
// client sees no difference but the latency.
func (s *Service) hydrate(ctx context.Context, msgs []Message) error {
	for i := range msgs {
		m := &msgs[i]
		if m.S3Ref == "" || m.Content != "" || m.Deleted {
			continue
		}
		if s.cfg.Blobs == nil {
			return fmt.Errorf("message %s/%d is archived but no blob storage is configured", m.ConversationID, m.SeqNo)
		}
		data, err := s.cfg.Blobs.Get(ctx, m.S3Ref)
		if errors.Is(err, ErrNotFound) {
			// A delete removes the archived text before it records the
			// tombstone (events.go); if that record then failed, the message
			// has no text left to show, and the rest of the page still reads.
			s.log.Warn("an archived message's text is gone; a delete of it may not have been recorded", "key", m.S3Ref)
			continue
		}
		if err != nil {
			return fmt.Errorf("fetch archived message %s: %w", m.S3Ref, err)
		}
		var wm wire.Message
		if err := json.Unmarshal(data, &wm); err != nil {
			return fmt.Errorf("decode archived message %s: %w", m.S3Ref, err)
		}
		m.Content = wm.Content
	}
	return nil
}
