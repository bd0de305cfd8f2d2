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
// and, in the TUI, an Update, a View and a frame. Keeping the batch open a
// few ms lets the next messages of the stream join it; the longer a stream
// lasts, the longer it is held (10, 30, then 60 ms), since a stream that
// has gone on for a while is likely to go on (docs/tui.md, "A steady stream
// shares its receive transactions"). While a batch is held its reader leaves the socket alone
// too, so the stream's frames are read a hold at a time (readgate.go).

const (
	// receiveHold is how long the first batches of a stream wait for more to
	// join them, and so the most one of their messages is delayed (its
	// display and its ack, both of which follow the commit). 10 ms is under
	// a third of a frame of the TUI at 30 frames a second and far under what
	// a person notices on a new message; at 200 msgs/s it lets two or three
	// messages share a commit.
	receiveHold = 10 * time.Millisecond
	// receiveHoldSteady is the hold once steadyAfter batches in a row were
	// part of a stream: at 200 msgs/s six or seven messages share a commit,
	// an event to the TUI and its frame. With a frame of the TUI (33 ms) after
	// it, the last message of a stream is on screen well within 100 ms.
	receiveHoldSteady = 30 * time.Millisecond
	steadyAfter       = 3
	// receiveHoldLong is the hold once longAfter batches in a row were part
	// of a stream, about a second of one at the steady hold: a stream that
	// long (a deploy's log, a busy channel at 40 msgs/s or more) is read as
	// a stream, not message by message, and each commit, its wake-ups, its
	// event to the TUI and its ack cost about as much for 12 messages as
	// for 6. At 200 msgs/s, chat open, a steady group's message went from
	// 278–292 to 253–267 µs of CPU with 60 ms, 214–250 with 90 (chatbench
	// tui-burst, docs/tui.md "Session 23: a long stream's hold"). 60, not
	// 90: the stream's last message waits out the hold, then the session
	// tells the pause 15 ms later (streampause.go) and the TUI draws, and
	// the screen is to be within 100 ms of the last send.
	receiveHoldLong = 60 * time.Millisecond
	longAfter       = 30
	// receiveStreaming is how recent the previous receive commit must be for
	// the hold to apply: only a stream is held. A message after a quiet spell
	// (a reply in a conversation going at human speed) is stored and shown at
	// once, since nothing is likely to follow it within the hold.
	receiveStreaming = 25 * time.Millisecond
	// receiveQueued is how many frames found waiting make a batch a burst's:
	// the queue batches it already, and holding it would only delay the
	// burst's last messages on their way to the screen.
	receiveQueued = 16
	// maxReceiveBatch bounds the frames handled in one batch (and so one
	// transaction), so a long sync answer is stored and acked in steps.
	maxReceiveBatch = 500
)

// receivePace is what the hold knows of the stream: when received messages
// were last committed, and how many batches in a row were part of a stream.
// Owned by the connection's serve goroutine.
type receivePace struct {
	storedAt time.Time
	streak   int
}

// stored records a commit of received messages.
func (p *receivePace) stored(at time.Time) { p.storedAt = at }

// hold is how long a batch that may be held waits for more, counting it into
// the streak: 0 after a quiet spell.
func (p *receivePace) hold(now time.Time) time.Duration {
	if now.Sub(p.storedAt) >= receiveStreaming {
		p.streak = 0
		return 0
	}
	p.streak++
	switch {
	case p.streak > longAfter:
		return receiveHoldLong
	case p.streak > steadyAfter:
		return receiveHoldSteady
	}
	return receiveHold
}

// gather makes a batch from first and the frames queued behind it. When the
// batch is part of a stream (it carries a message, fewer than receiveQueued
// frames were waiting, and the previous receive commit was recent), it
// waits out the hold, then takes what queued
// meanwhile; done (the connection's end) cuts the wait short. The wait does
// not wake for each frame that comes: what the hold saves is wake-ups.
// Without a gate, a stream fast enough to fill the reader's queue in the
// hold only waits on the socket for as long; with one the reader leaves the
// socket alone during the hold (frames of a WebSocket message it has read
// already still come into the queue) and the batch ends once it has read
// what came (readgate.go).
func (s *Session) gather(frames <-chan wire.Frame, first wire.Frame, pace *receivePace, gate *readGate, done <-chan struct{}) []wire.Frame {
	if gate != nil {
		defer gate.decided()
	}
	batch := drainFrames(frames, []wire.Frame{first})
	var hold time.Duration
	switch {
	case len(batch) >= receiveQueued:
		// A burst: its last messages, when they come fewer, get the short
		// hold of a stream's start, not the steady one.
		pace.streak = 0
	case carriesMessage(batch):
		hold = pace.hold(time.Now())
	}
	if s.heldHook != nil {
		s.heldHook(hold, len(batch))
	}
	if hold <= 0 {
		return batch
	}
	if gate != nil {
		gate.pause(time.Now().Add(hold))
	}
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
		return drainFrames(frames, batch)
	}
	if gate != nil {
		// The reader left the socket alone meanwhile: what came is in it,
		// and is in the batch once the reader has read it all. A reader
		// that never catches up (a stream faster than it reads) is not
		// waited for longer than one more hold.
		t.Reset(hold)
		select {
		case <-gate.caughtUp():
		case <-t.C:
		case <-done:
		}
	}
	return drainFrames(frames, batch)
}

// drainFrames adds to batch the frames already queued, up to maxReceiveBatch.
func drainFrames(frames <-chan wire.Frame, batch []wire.Frame) []wire.Frame {
	for len(batch) < maxReceiveBatch {
		select {
		case f, ok := <-frames:
			if !ok {
				return batch // the serve loop's next receive sees the close
			}
			batch = append(batch, f)
		default:
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
