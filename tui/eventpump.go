package tui

import (
	"time"

	"github.com/chatterm/chat/client"
)

// A member's boundary move (their ack or read report) comes as an event of
// its own: in a group of 10 with everyone online, each incoming message
// brings eight more, each an Update and a View of its own when they came
// apart. Only the ticks of our own messages show them, and no frame shows
// them faster than the renderer's rate, so a batch of nothing but boundary
// moves waits up to boundaryHold for more to come with it; anything else
// (a message, a key's answer) ends the wait at once, so nothing but ticks is
// ever later for it.
const boundaryHold = 33 * time.Millisecond // a frame at 30 a second

// drainEvents adds to batch the events already waiting, up to maxEventBatch.
func drainEvents(ch <-chan client.Event, batch eventBatchMsg) eventBatchMsg {
	for len(batch) < maxEventBatch {
		select {
		case ev, ok := <-ch:
			if !ok {
				return batch // the next wait says it closed
			}
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}

// onlyBoundaries says whether every event in batch is a boundary move.
func onlyBoundaries(batch eventBatchMsg) bool {
	for _, ev := range batch {
		if _, ok := ev.(client.StatusEvent); !ok {
			return false
		}
	}
	return true
}

// holdBoundaries adds to a batch of boundary moves what comes within hold:
// until then, until another kind of event comes (with whatever waits behind
// it), or until the batch is full.
func holdBoundaries(ch <-chan client.Event, batch eventBatchMsg, hold time.Duration) eventBatchMsg {
	if hold <= 0 {
		return batch
	}
	t := time.NewTimer(hold)
	defer t.Stop()
	for len(batch) < maxEventBatch {
		select {
		case ev, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, ev)
			if _, boundary := ev.(client.StatusEvent); !boundary {
				return drainEvents(ch, batch)
			}
		case <-t.C:
			return batch
		}
	}
	return batch
}
