package client

import "time"

// A stream's pause, told as it happens.
//
// A UI that draws a stream of messages at a few frames a second (the TUI's
// pacer: tui/pacer.go, 10 a second) must still draw the stream's last
// message at once, and it cannot tell a pause from the gap between two
// held batches (hold.go) without waiting longer than the hold: the pacer
// waited 45 ms without a View, so the last message could be on screen as
// late as the hold plus 45 ms, and a hold longer than 45 ms was out of the
// question. The session knows sooner: after a held batch's commit, the
// next message of a going stream comes within a few ms (the gate reads on
// as soon as the batch is decided), and a burst's next frames are already
// queued. When none has come for receivePaused, the session says so with a
// StreamPausedEvent, and the UI draws. Messages that come first stop the
// timer, so a going stream costs no wake-up for it; other frames (the
// members' boundaries, a typing note) leave it running.

// receivePaused is how long after a batch's commit no frame means the
// stream has paused: three messages' gap at 200 msgs/s. A slower stream
// (a message every 15 ms or more) pauses after each batch, and is drawn as
// each batch comes, as before its frames were paced.
const receivePaused = 15 * time.Millisecond

// StreamPausedEvent: incoming messages paused (nothing came for
// receivePaused after a batch of messages was stored and reported). Only with
// SessionConfig.StreamPauses; dropped when the UI is behind on events.
type StreamPausedEvent struct{}

// pauseWatch is the serve loop's timer for a stream's pause; the zero
// value and one made off do nothing.
type pauseWatch struct {
	on    bool
	t     *time.Timer
	armed bool
}

func newPauseWatch(on bool) *pauseWatch { return &pauseWatch{on: on} }

// watch starts the timer after a batch that carried messages (held or a
// burst's: a burst's last messages are as much a stream's end). Batches
// without messages leave it running.
func (w *pauseWatch) watch() {
	if !w.on {
		return
	}
	if w.t == nil {
		w.t = time.NewTimer(receivePaused)
	} else {
		w.t.Reset(receivePaused)
	}
	w.armed = true
}

// c is the timer's channel while it is armed, nil (never ready) otherwise.
func (w *pauseWatch) c() <-chan time.Time {
	if !w.armed {
		return nil
	}
	return w.t.C
}

// fired records that the timer fired.
func (w *pauseWatch) fired() { w.armed = false }

// stop stops the timer: messages came, or the loop ends.
func (w *pauseWatch) stop() {
	if w.armed {
		w.t.Stop()
		w.armed = false
	}
}
