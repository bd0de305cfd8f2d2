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

// archiveBatch is how many rows the archiver reads from a conversation in one
// visit (in pages of archivePage), and looks at between renewals of its lease.
const archiveBatch = 500

// coldKey is where an archived row lives in the BlobStore: one key per
// version of a message (updated_seq; an event has none), so an edit that removes the old version's blob
// can never remove the new version's, archived again meanwhile.
func coldKey(m Message) string {
	if m.UpdatedSeq > 0 {
		return fmt.Sprintf("cold/%s/%d-%d.json", m.ConversationID, m.SeqNo, m.UpdatedSeq)
	}
	return fmt.Sprintf("cold/%s/%d.json", m.ConversationID, m.SeqNo)
}

// RunArchiver moves rows older than after to the BlobStore every interval,
// until ctx ends. The blob is written before the table is changed, so a failure
// between the two leaves the row hot, never lost.
func (s *Service) RunArchiver(ctx context.Context, after, interval time.Duration) {
	cold, ok := s.store.(ColdStore)
	if !ok || s.cfg.Blobs == nil {
		s.log.Info("cold tier off: the store or blob storage does not support it")
		return
	}
	// The first pass waits too: a node starts when its clients reconnect all at
	// once, which is no moment for background work.
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

// ArchivePass archives every row older than after, conversation by
// conversation, and reports whether this node ran the pass. On a Store shared
// by several nodes (a Leaser) only the holder of the archiver lease runs it;
// the holder keeps the lease from pass to pass (it lasts 1.5 intervals,
// renewed before every archiveBatch rows), so one node does the archiving,
// and another takes over once a dead holder's lease has expired.
func (s *Service) ArchivePass(ctx context.Context, cold ColdStore, after, interval time.Duration) (bool, error) {
	renew := func() (bool, error) { return true, nil }
	if l, shared := s.store.(Leaser); shared {
		renew = func() (bool, error) {
			now := s.cfg.Now()
			held, err := l.TakeLease(ctx, archiveLease, s.cfg.NodeID, now, now.Add(interval+interval/2))
			if err != nil {
				return false, fmt.Errorf("take the archiver lease: %w", err)
			}
			return held, nil
		}
	}
	held, err := renew()
	if err != nil || !held {
		// Not held: another node archives (or took over while this pass ran).
		return false, err
	}
	_, err = s.archive(ctx, cold, s.cfg.Now().Add(-after), renew)
	return true, err
}

// ArchiveOnce archives every row older than after, without the lease, and
// returns how many rows it moved to the cold tier.
func (s *Service) ArchiveOnce(ctx context.Context, cold ColdStore, after time.Duration) (int, error) {
	return s.archive(ctx, cold, s.cfg.Now().Add(-after), func() (bool, error) { return true, nil })
}

// archive visits the conversations due until none is left, renewing the
// lease before every archiveBatch rows looked at. A conversation that cannot
// be archived now (a row changing under the archiver, a failure) is left for
// the next pass: it is not visited again in this one.
func (s *Service) archive(ctx context.Context, cold ColdStore, cutoff time.Time, renew func() (bool, error)) (int, error) {
	moved, looked := 0, 0
	skip := map[string]bool{}
	// How far this pass has archived each conversation: the index may answer
	// with a watermark a moment old (a DynamoDB GSI is eventually
	// consistent), and a visit starts from the higher of the two.
	reached := map[string]int64{}
	var errs []error
	for {
		due, err := cold.ArchiveDue(ctx, cutoff, archiveDuePage)
		if err != nil {
			return moved, errors.Join(append(errs, fmt.Errorf("list the conversations due: %w", err))...)
		}
		progress := false
		for _, d := range due {
			if skip[d.ConversationID] {
				continue
			}
			if looked >= archiveBatch {
				held, err := renew()
				if err != nil || !held {
					return moved, errors.Join(append(errs, err)...)
				}
				looked = 0
			}
			progress = true
			d.ArchivedThrough = max(d.ArchivedThrough, reached[d.ConversationID])
			r, err := s.archiveConversation(ctx, cold, d, cutoff)
			moved += r.moved
			looked += r.looked
			if err != nil {
				if ctx.Err() != nil {
					return moved, errors.Join(append(errs, err)...)
				}
				errs = append(errs, fmt.Errorf("conversation %s: %w", d.ConversationID, err))
			}
			if r.through > d.ArchivedThrough {
				reached[d.ConversationID] = r.through
			} else {
				skip[d.ConversationID] = true
			}
		}
		if !progress {
			return moved, errors.Join(errs...)
		}
	}
}

// archiveDuePage is how many due conversations the archiver asks for at a
// time.
const archiveDuePage = 100

// archiveRun is what one visit to a conversation did.
type archiveRun struct {
	moved   int   // rows whose content went to the cold tier
	looked  int   // rows read
	through int64 // the watermark it reached: above the one it started from, worth another visit
}

// archiveConversation walks d's rows after its watermark in seq order while
// they are older than cutoff, archives each, and moves the watermark past the
// unbroken run it archived. Each row's blob is written before its content
// leaves the table, and the watermark moves only after that: a run stopped
// at any point leaves every row either hot or archived, and the next run
// starts again from the watermark, finding the rows already archived done.
func (s *Service) archiveConversation(ctx context.Context, cold ColdStore, d ArchiveDue, cutoff time.Time) (archiveRun, error) {
	var run archiveRun
	through := d.ArchivedThrough
	var next time.Time // zero: no row follows through
	var stop error
walk:
	for run.looked < archiveBatch {
		next = time.Time{}
		// Pages smaller than a batch: the first row newer than cutoff ends
		// the walk, and what the page read past it was read for nothing.
		rows, err := s.store.ListMessagesAfter(ctx, d.ConversationID, through, archivePage)
		if err != nil {
			stop = fmt.Errorf("read rows after %d: %w", through, err)
			break
		}
		run.looked += len(rows)
		for _, m := range rows {
			if !m.Timestamp.Before(cutoff) {
				next = m.Timestamp
				break walk
			}
			n, err := s.archiveRow(ctx, cold, m, cutoff)
			run.moved += n
			if err != nil {
				// Changed under the archiver, or a failure: the walk stops
				// here, and the next pass reads the row as it is then.
				next, stop = m.Timestamp, err
				break walk
			}
			through = m.SeqNo
		}
		if len(rows) < archivePage {
			break
		}
		// Where the batch ends, more may follow: still due, from here.
		next = rows[len(rows)-1].Timestamp
	}
	if through == d.ArchivedThrough && stop != nil {
		// Nothing done: the conversation stays as it is for the next pass.
		return run, ignoreChanged(stop)
	}
	if err := s.archiveStep(ctx, "advance"); err != nil {
		return run, errors.Join(stop, err)
	}
	if err := cold.AdvanceArchive(ctx, d.ConversationID, through, next); err != nil {
		return run, errors.Join(stop, fmt.Errorf("advance the watermark to %d: %w", through, err))
	}
	run.through = through
	return run, ignoreChanged(stop)
}

// ignoreChanged drops ErrTargetChanged: a row that changed under the
// archiver is no failure, only left for the next pass.
func ignoreChanged(err error) error {
	if errors.Is(err, ErrTargetChanged) {
		return nil
	}
	return err
}

// archivePage is how many rows the archiver reads from a conversation at a
// time.
const archivePage = 100

// archiveRow moves one row's content to the cold tier and reports how many
// rows it moved (the row, and an edited target whose text came back to the
// table). ErrTargetChanged: the row changed since it was read.
//
// Events go after their targets, in seq order like every row: an event is
// archived as it is, and its target (earlier, so below the watermark or
// earlier in this walk) is archived again if the event brought its content
// back to the table (an edit of an archived message); an event of a deleted
// message moves nothing, and its text leaves the cold tier. An event whose content
// is no longer than the blob key that would replace it (a reaction's emoji)
// stays in the table: moving it would cost a PUT and save nothing. Any kind
// of event is handled so, membership events included.
func (s *Service) archiveRow(ctx context.Context, cold ColdStore, m Message, cutoff time.Time) (int, error) {
	if !m.IsEvent() || m.TargetSeq == 0 {
		return s.archiveContent(ctx, cold, m)
	}
	target, err := s.messageAt(ctx, m.ConversationID, m.TargetSeq)
	if err != nil {
		return 0, fmt.Errorf("read the target of %d: %w", m.SeqNo, err)
	}
	if target.Deleted {
		// The text of a deleted message's edits goes (the store clears it
		// from the table); a run killed between its PUT and its mark, or a
		// delete racing the archiver, may have left a blob of it.
		key := m.S3Ref
		if key == "" {
			key = coldKey(m)
		}
		if err := s.cfg.Blobs.Delete(ctx, key); err != nil {
			return 0, fmt.Errorf("remove %s of a deleted message: %w", key, err)
		}
		return 0, nil
	}
	moved := 0
	if !target.IsEvent() && target.Timestamp.Before(cutoff) {
		n, err := s.archiveContent(ctx, cold, target)
		if err != nil {
			return 0, fmt.Errorf("archive target %d again: %w", target.SeqNo, err)
		}
		moved += n
	}
	n, err := s.archiveContent(ctx, cold, m)
	return moved + n, err
}

// archiveContent writes m's blob, then clears its content in the table: one
// row moved, or none when there is nothing to move.
func (s *Service) archiveContent(ctx context.Context, cold ColdStore, m Message) (int, error) {
	key := coldKey(m)
	if m.S3Ref != "" || m.Deleted || m.Content == "" || m.IsEvent() && len(m.Content) <= len(key) {
		return 0, nil
	}
	data, err := json.Marshal(wireMessage(m))
	if err != nil {
		return 0, err
	}
	if err := s.cfg.Blobs.Put(ctx, key, data, "application/json"); err != nil {
		return 0, fmt.Errorf("put %s: %w", key, err)
	}
	if err := s.archiveStep(ctx, "mark"); err != nil {
		return 0, err
	}
	if err := cold.MarkArchived(ctx, m, key); errors.Is(err, ErrTargetChanged) {
		now, rerr := s.messageAt(ctx, m.ConversationID, m.SeqNo)
		if rerr != nil {
			return 0, fmt.Errorf("read %d again: %w", m.SeqNo, rerr)
		}
		if now.S3Ref == key {
			// Another archiver (two nodes, each thinking it holds the
			// lease) marked it first, under the same key: the blob is its.
			return 0, nil
		}
		// Edited or deleted since it was read: the blob holds what the row
		// no longer says.
		if derr := s.cfg.Blobs.Delete(ctx, key); derr != nil {
			return 0, fmt.Errorf("remove %s, archived as the row changed: %w", key, derr)
		}
		return 0, err
	} else if err != nil {
		return 0, fmt.Errorf("mark %s archived: %w", key, err)
	}
	if m.IsEvent() && m.TargetSeq > 0 {
		// Deleted since the archiver read it: the delete may have looked
		// for this event's blob before it was marked.
		target, err := s.messageAt(ctx, m.ConversationID, m.TargetSeq)
		if err != nil {
			return 0, fmt.Errorf("read the target of %d again: %w", m.SeqNo, err)
		}
		if target.Deleted {
			if err := s.cfg.Blobs.Delete(ctx, key); err != nil {
				return 0, fmt.Errorf("remove %s of a deleted message: %w", key, err)
			}
			return 0, nil
		}
	}
	s.metrics.Archived.Inc()
	return 1, nil
}

// archiveStep is the test hook between an archiver's writes (archiveStepHook):
// a test kills the archiver there by cancelling its context.
func (s *Service) archiveStep(ctx context.Context, step string) error {
	if s.archiveStepHook != nil {
		s.archiveStepHook(step)
	}
	return ctx.Err()
}

// removeArchivedEdits removes the blobs target's edits may have in the cold
// tier: the text of every version of a deleted message leaves it, as it
// leaves the table. The delete calls it before it is recorded, and again
// after: an archiver that read the target before the delete may mark one of
// its edits in between (the archiver checks the target again after marking
// an edit, which covers a mark after the delete).
func (s *Service) removeArchivedEdits(ctx context.Context, target Message) error {
	cold, ok := s.store.(ColdStore)
	if !ok || s.cfg.Blobs == nil {
		return nil
	}
	seqs, err := cold.EditSeqs(ctx, target.ConversationID, target.SeqNo)
	if err != nil {
		return fmt.Errorf("list the edits of %d: %w", target.SeqNo, err)
	}
	for _, seq := range seqs {
		// An archived event's key: it has no version of its own.
		key := coldKey(Message{ConversationID: target.ConversationID, SeqNo: seq})
		if err := s.cfg.Blobs.Delete(ctx, key); err != nil {
			return fmt.Errorf("remove archived edit %s: %w", key, err)
		}
	}
	return nil
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
