package protocol

import (
	"errors"
	"slices"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// catchUpPage is how many stored messages one catch-up read fetches.
const catchUpPage = 200

// catchUpPending sends c every message pending for its user. An error means
// the store did not answer (what was sent before it stands); the caller tries
// again later.
func (e *Engine) catchUpPending(c *Session) error {
	pend, err := e.svc.PendingFor(e.svc.Context(), c.UserID)
	if err != nil {
		e.log.Debug("catch-up: list pending", "user", c.UserID, "err", err)
		return err
	}
	for _, p := range pend {
		if _, _, err := e.sendAfterLimit(c, p.ConversationID, p.FirstUndeliveredSeq-1, nil); err != nil {
			return err
		}
	}
	return nil
}

// catchUpLater runs c's catch-up again after a pause that grows with each
// failed try, while c lives: a catch-up the store could not serve (an outage,
// an open circuit) must not be dropped, or what was pending would wait for
// the next connect.
func (e *Engine) catchUpLater(c *Session, try int) {
	wait := min(time.Duration(1<<min(try-1, 5))*time.Second, 30*time.Second)
	time.AfterFunc(wait, func() {
		select {
		case <-c.Closed():
			return
		case <-e.svc.Context().Done():
			return
		default:
		}
		again := func() {
			if err := e.catchUpPending(c); err != nil && !errors.Is(err, errConnEnded) {
				e.catchUpLater(c, try+1)
			}
		}
		if !e.enqueue(c, request{run: again}) && !e.svc.Closing() {
			e.catchUpLater(c, try+1) // the connection's queue is full: later
		}
	})
}

// errConnEnded: the connection ended while messages were being queued to it.
var errConnEnded = errors.New("connection ended")

// sendAfterLimit queues stored messages of convID after seq to c, waiting
// for room: all of them when quota is nil, else as many as quota gives
// room for before each store read. It says how many it sent and whether
// messages may remain past what it read; an error when the store did not
// answer (those sent before it stand) or errConnEnded.
func (e *Engine) sendAfterLimit(c *Session, convID string, after int64, quota *syncQuota) (sent int, more bool, err error) {
	for {
		page := catchUpPage
		if quota != nil {
			page = quota.room(page)
		}
		if page == 0 {
			return sent, true, nil
		}
		msgs, err := e.svc.MessagesAfter(e.svc.Context(), convID, after, page)
		if err != nil {
			e.log.Debug("catch-up read", "conversation", convID, "err", err)
			return sent, false, err
		}
		for _, m := range msgs {
			data, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeMessage, Message: ptr(m.Wire())})
			if !c.SendWait(conn.Frame{Data: data, Queued: time.Now()}) {
				return sent, false, errConnEnded
			}
			c.CaughtUpTo(convID, m.SeqNo)
			after = m.SeqNo
			sent++
			if quota != nil {
				quota.spend(1)
			}
		}
		if len(msgs) < page {
			return sent, false, nil
		}
	}
}

func (e *Engine) sync(c *Session, f wire.Frame) {
	// A sync reads history as GET /history does, under the same per-user
	// limit; refused, it is answered as a failed sync is (an error with the
	// hint, then "synced" with more), which clients already retry after the hint.
	pages, err := e.svc.AllowSync(e.svc.Context(), c.UserID, len(f.Cursors))
	if err != nil {
		e.syncFailed(c, f.ID, err)
		return
	}
	more := false
	quota := e.newSyncQuota(c.UserID, pages)
	for _, cur := range f.Cursors {
		if quota.spent() {
			more = true
			break
		}
		members, err := e.svc.Members(e.svc.Context(), cur.ConversationID)
		if err != nil && !errors.Is(err, server.ErrNotFound) && wire.AsError(err).Code != wire.CodeNotFound {
			e.syncFailed(c, f.ID, err)
			return
		}
		if !slices.Contains(members, c.UserID) {
			e.reply(c, wire.ErrorFrame(f.ID, wire.Errorf(wire.CodeForbidden, "you are not a member of conversation %s", cur.ConversationID)))
			continue
		}
		c.noteHeld(cur.ConversationID, cur.SeqNo)
		_, m, err := e.sendAfterLimit(c, cur.ConversationID, cur.SeqNo, quota)
		if errors.Is(err, errConnEnded) {
			return
		}
		if err != nil {
			e.syncFailed(c, f.ID, err)
			return
		}
		more = more || m
	}
	e.reply(c, wire.Frame{Type: wire.TypeSynced, ID: f.ID, More: more})
}

// syncFailed ends a sync the store could not serve. It must not look complete:
// a client takes a complete sync to mean that whatever it lacks below its
// newest message does not exist, and would skip past messages it never got.
// So the answer is an error (with a retry hint) and then "synced" with more
// set: sync again (from where you are now).
func (e *Engine) syncFailed(c *Session, id string, err error) {
	e.reply(c, wire.ErrorFrame(id, e.svc.ErrorFor("sync", err)))
	e.reply(c, wire.Frame{Type: wire.TypeSynced, ID: id, More: true})
}
