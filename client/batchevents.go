package client

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// MessagesEvent: messages new to this device, stored in the cache by one
// commit, in the order they arrived. A session whose
// SessionConfig.MessageBatches is set reports each commit's new messages so,
// in one event, instead of a MessageEvent each: in a burst a commit stores
// hundreds, and one channel send, one wake-up of the reader and one pass of
// its handler for each cost a consumer that only prints or counts them
// (chat tail, the inbox) more than the message itself (docs/tui.md).
// Messages is the event's own: the consumer may keep it.
type MessagesEvent struct{ Messages []wire.Message }

func (MessagesEvent) event() {}

// emitAdded reports the messages one commit stored, before anything else
// the commit brings (the changes their events made, the senders'
// boundaries), as one MessageEvent each did.
func (s *Session) emitAdded(ctx context.Context, added []wire.Message) {
	if len(added) == 0 {
		return
	}
	if s.cfg.MessageBatches {
		s.emit(ctx, MessagesEvent{Messages: added})
		return
	}
	for _, m := range added {
		s.emit(ctx, MessageEvent{Message: m})
	}
}
