package server

import (
	"context"
	"errors"
	"time"

	"github.com/chatterm/chat/server/conn"
	"github.com/chatterm/chat/wire"
)

// Sends whose first fan-out may not have happened.
//
// A send is fanned out after its write commits. When the write's answer is
// lost (a DynamoDB call that timed out after it was applied: maybe_stored),
// the message is stored but was never fanned out: not to the receivers' live
// connections and not to the sender's other devices, which have no pending
// row for the delivery worker to find. A receiving client that had meanwhile
// got a later message and a complete sync took the number for one no message
// took, and would never ask for it. So a stored message is fanned out again
// when its sender resends it (the resend is answered from the stored record)
// and, for a sender that does not come back, once after a grace period from a
// send answered maybe_stored. Only such sends: a resend after an answer that
// was merely lost on its way back to the client had its fan-out, and a second
// copy would reach live connections out of seq order. This node keeps the
// sends it answered maybe_stored until a grace period has passed; a resend to
// another node is covered by the check after it.

// refanout fans out again the stored messages of convID that records name
// (from the idempotency record, so only their numbers are certain: each is
// read back whole). from is the connection the resend came on, which gets
// its answer instead.
func (s *Service) refanout(ctx context.Context, convID string, records []Message, members []string, from *conn.Conn) {
	var again []Message
	for _, r := range records {
		if _, unsure := s.unsure.LoadAndDelete(unsureKey(convID, r.MessageID)); !unsure {
			continue
		}
		msgs, err := s.store.ListMessagesAfter(ctx, convID, r.SeqNo-1, 1)
		if err == nil {
			err = s.hydrate(ctx, msgs)
		}
		if err != nil {
			s.log.Debug("read back a resent message", "conversation", convID, "seq", r.SeqNo, "err", err)
			s.unsure.Store(unsureKey(convID, r.MessageID), struct{}{}) // for checkLater's next look
			continue
		}
		if len(msgs) == 1 && msgs[0].SeqNo == r.SeqNo && msgs[0].MessageID == r.MessageID {
			again = append(again, msgs[0])
		}
	}
	if len(again) > 0 {
		s.metrics.Refanouts.Add(float64(len(again)))
		s.fanout(ctx, again, members, from)
	}
}

// checkLater looks for senderID's messageID in convID a grace period after its send was
// answered maybe_stored, and fans it out if it was stored after all. While the
// store does not answer (the outage that lost the answer may last) it looks
// again, a little later each time, for up to unsureFor.
func (s *Service) checkLater(convID, senderID, messageID string, members []string) {
	key := unsureKey(convID, messageID)
	s.unsure.Store(key, struct{}{})
	start := time.Now()
	var check func(wait time.Duration)
	check = func(wait time.Duration) {
		time.AfterFunc(wait, func() {
			if _, ok := s.unsure.Load(key); !ok {
				return // resent here and fanned out then
			}
			if !s.begin() {
				s.unsure.Delete(key)
				return // shutting down: the next connect's catch-up has it
			}
			defer s.wg.Done()
			ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
			defer cancel()
			sent, err := s.store.SentMessages(ctx, convID, []string{messageID})
			if err != nil {
				if s.ctx.Err() == nil && time.Since(start) < unsureFor {
					check(min(2*wait, 30*time.Second))
					return
				}
				s.unsure.Delete(key)
				s.log.Warn("a send answered maybe_stored could not be checked; devices that missed it get it at their next sync", "conversation", convID, "message_id", messageID, "err", err)
				return
			}
			m, ok := sent[messageID]
			if !ok || m.SenderID != senderID {
				// Not stored after all (the id may be another member's
				// message, which had its own fan-out).
				s.unsure.Delete(key)
				return
			}
			m.MessageID = messageID
			s.refanout(ctx, convID, []Message{m}, members, nil)
			if _, again := s.unsure.Load(key); again && time.Since(start) < unsureFor {
				check(min(2*wait, 30*time.Second)) // it could not be read back
			}
		})
	}
	check(s.cfg.RedeliverAfter)
}

// unsureFor bounds how long a send answered maybe_stored is looked for.
const unsureFor = 10 * time.Minute

func unsureKey(convID, messageID string) string { return convID + "\x00" + messageID }

// isMaybeStored reports whether err is the answer for a write that may have
// been made.
func isMaybeStored(err error) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == wire.CodeMaybeStored
}
