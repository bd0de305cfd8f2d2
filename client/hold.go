package client

import (
	"time"

	"github.com/chatterm/chat/wire"
)

// Holding the receive transaction open while messages stream in.
//
// Each batch of incoming messages is stored in one SQLite transaction and
// acked after its commit. A burst arrives queued, so one transaction takes
// hundreds of messages; but a steady stream (a busy group at 200 msgs/s)
// arrives one message at a time, a few ms apart, and each then pays a commit
// of its own (~260 µs of CPU at synchronous=NORMAL), the session's wake-ups
// and, in the TUI, a frame. Keeping the batch open a few ms lets the next
// messages of the stream join it.

const (
	// receiveHold is the longest a batch of incoming messages waits for more
	// to join it, and so the most a held message is delayed (its display and
	// its ack, both of which follow the commit). 10 ms is under a third of a
	// frame of the TUI at 30 frames a second and far under what a person
	// notices on a new message; at 200 msgs/s it lets two or three messages
	// share a commit, and measured 10–15% less CPU a message than 5 ms
	// (docs/tui.md, "A steady stream shares its receive transactions").
	receiveHold = 10 * time.Millisecond
	// receiveStreaming is how recent the previous receive commit must be for
	// the hold to apply: only a stream is held. A message after a quiet spell
	// (a reply in a conversation going at human speed) is stored and shown at
	// once, since nothing is likely to follow it within the hold.
	receiveStreaming = 25 * time.Millisecond
	// maxReceiveBatch bounds the frames handled in one batch (and so one
	// transaction), so a long sync answer is stored and acked in steps.
	maxReceiveBatch = 500
)

// gather makes a batch from first and the frames queued behind it. When the
// batch carries a message and the previous commit of received messages
// (storedAt) was recent, it waits up to receiveHold for more to join, unless
// the batch fills or done (the connection's end) comes first.
func (s *Session) gather(frames <-chan wire.Frame, first wire.Frame, storedAt time.Time, done <-chan struct{}) []wire.Frame {
	batch := []wire.Frame{first}
	for len(batch) < maxReceiveBatch {
		select {
		case f, ok := <-frames:
			if !ok {
				return batch
			}
			batch = append(batch, f)
			continue
		default:
		}
		break
	}
	hold := len(batch) < maxReceiveBatch && carriesMessage(batch) && time.Since(storedAt) < receiveStreaming
	if s.heldHook != nil {
		s.heldHook(hold)
	}
	if !hold {
		return batch
	}
	t := time.NewTimer(receiveHold)
	defer t.Stop()
	for len(batch) < maxReceiveBatch {
		select {
		case f, ok := <-frames:
			if !ok {
				return batch
			}
			batch = append(batch, f)
		case <-t.C:
			return batch
		case <-done:
			return batch
		}
	}
	return batch
}

func carriesMessage(batch []wire.Frame) bool {
	for _, f := range batch {
		if f.Type == wire.TypeMessage {
			return true
		}
	}
	return false
}
