package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/chatterm/chat/wire"
)

// maxEventRetries bounds how often an event is checked again after its target
// changed under it (an event from another node in between).
const maxEventRetries = 3

// storeChecked stores one message or event (the caller holds the
// conversation's lock). A reply and an event need their target read and
// checked first; an event is checked again when the store finds the target
// changed meanwhile (ErrTargetChanged): a race with another node.
func (s *Service) storeChecked(ctx context.Context, m Message, receivers []string, pool *seqPool) (Message, bool, error) {
	if !m.IsEvent() && m.ReplyTo == 0 {
		return s.storeOne(ctx, m, receivers, pool)
	}
	for attempt := 1; ; attempt++ {
		target, err := s.messageAt(ctx, m.ConversationID, max(m.TargetSeq, m.ReplyTo))
		if err != nil {
			return m, false, err
		}
		if m.ReplyTo != 0 {
			if target.IsEvent() {
				return m, false, wire.Errorf(wire.CodeInvalid, "seq %d is a %s, not a message: reply to the message it changed (%d)", m.ReplyTo, target.Kind, target.TargetSeq)
			}
			return s.storeOne(ctx, m, receivers, pool)
		}
		ev, noop, err := s.planEvent(ctx, m, target)
		if err != nil {
			return m, false, err
		}
		if noop {
			// Deleting a deleted message: the tombstone is there already. The
			// answer names the delete that made it, as for a resend.
			m.SeqNo, m.Timestamp = target.UpdatedSeq, target.Timestamp
			return m, false, nil
		}
		if target.S3Ref != "" && s.cfg.Blobs == nil {
			return m, false, fmt.Errorf("message %d is archived but no blob storage is configured", target.SeqNo)
		}
		if ev.Kind == wire.KindDelete && target.Edited {
			// So do the archived texts of its edits (archive.go).
			if err := s.removeArchivedEdits(ctx, target); err != nil {
				return m, false, fmt.Errorf("%w: %w", ErrNotApplied, err)
			}
		}
		if ev.Kind == wire.KindDelete && target.S3Ref != "" {
			// The archived content goes first: if the blob cannot be removed the
			// delete is refused, rather than done in the table and not in the
			// cold tier. Removing it again on a retry is harmless.
			if err := s.cfg.Blobs.Delete(ctx, target.S3Ref); err != nil {
				return m, false, fmt.Errorf("%w: remove archived content %s: %w", ErrNotApplied, target.S3Ref, err)
			}
		}
		stored, created, err := s.storeOne(ctx, ev, receivers, pool)
		if errors.Is(err, ErrTargetChanged) && attempt < maxEventRetries {
			continue
		}
		if errors.Is(err, ErrTargetChanged) {
			return m, false, wire.Errorf(wire.CodeConflict, "message %d keeps changing; try again", m.TargetSeq)
		}
		if err == nil && created && ev.Kind == wire.KindDelete && target.Edited {
			if derr := s.removeArchivedEdits(ctx, target); derr != nil {
				s.log.Warn("a deleted message's archived edits could not be removed", "seq", target.SeqNo, "err", derr)
			}
		}
		if err == nil && created && ev.Kind == wire.KindEdit && target.S3Ref != "" {
			// The table holds the new content now; the old one must not stay in
			// the cold tier. A failure leaves a blob nothing points to.
			if derr := s.cfg.Blobs.Delete(ctx, target.S3Ref); derr != nil {
				s.log.Warn("an edited message's archived original could not be removed", "key", target.S3Ref, "err", derr)
			}
		}
		if err == nil && created && ev.Kind == wire.KindDelete && target.Attachment != "" {
			s.releaseAttachment(ctx, target)
		}
		return stored, created, err
	}
}

// messageAt reads the row at seq (a message or an event), as stored: an
// archived message's content is not fetched.
func (s *Service) messageAt(ctx context.Context, convID string, seq int64) (Message, error) {
	msgs, err := s.store.ListMessages(ctx, convID, seq+1, 1)
	if err != nil {
		return Message{}, s.internal("read target message", err)
	}
	if len(msgs) == 0 || msgs[0].SeqNo != seq {
		return Message{}, wire.Errorf(wire.CodeNotFound, "no message %d in conversation %s", seq, convID)
	}
	return msgs[0], nil
}

// planEvent checks that m's sender may make the event on target and returns
// it as it is to be stored: a reaction's toggle resolved into the sender's
// reaction from now on, and BaseSeq set to the target as read. noop says the
// event would change nothing (deleting a deleted message).
func (s *Service) planEvent(ctx context.Context, m, target Message) (ev Message, noop bool, err error) {
	if target.IsEvent() {
		return m, false, wire.Errorf(wire.CodeInvalid, "seq %d is a %s, not a message", target.SeqNo, target.Kind)
	}
	if target.Deleted {
		if m.Kind == wire.KindDelete {
			return m, true, nil
		}
		return m, false, wire.Errorf(wire.CodeConflict, "message %d was deleted", target.SeqNo)
	}
	switch m.Kind {
	case wire.KindEdit:
		if target.SenderID != m.SenderID {
			return m, false, wire.Errorf(wire.CodeForbidden, "only its sender can edit message %d", target.SeqNo)
		}
	case wire.KindDelete:
		if target.SenderID != m.SenderID {
			admin, err := s.groupAdmin(ctx, m.ConversationID, m.SenderID)
			if err != nil {
				return m, false, err
			}
			if !admin {
				return m, false, wire.Errorf(wire.CodeForbidden, "only its sender or a group admin can delete message %d", target.SeqNo)
			}
		}
	case wire.KindReaction:
		// The same emoji again takes the reaction away: the stored event says
		// what the sender's reaction is now, so applying events in order needs
		// no knowledge of what came before.
		if m.Content != "" && target.Reactions[m.SenderID] == m.Content {
			m.Content = ""
		}
	}
	m.BaseSeq, m.BaseRef = target.UpdatedSeq, target.S3Ref
	return m, false, nil
}

// groupAdmin says whether user administers the group convID (never in a
// direct conversation).
func (s *Service) groupAdmin(ctx context.Context, convID, user string) (bool, error) {
	if !isGroup(convID) {
		return false, nil
	}
	p, err := s.store.GetParticipant(ctx, convID, user)
	if err != nil {
		return false, s.internal("read participant", err)
	}
	return s.isAdmin(ctx, convID, p)
}

// eventPreview is what a notification says of an event, "" for one not worth
// a notification.
func eventPreview(m Message) string {
	if m.Kind == wire.KindReaction && m.Content != "" {
		return "reacted " + m.Content
	}
	return ""
}
