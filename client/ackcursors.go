package client

import "github.com/chatterm/chat/wire"

// ackCursors are the sync cursors a batch's message puts left (as
// localstore.Batch reports them), so that the acks after the commit take
// them from there instead of reading each conversation's cursor again. Valid
// only while no other write of the batch can have moved one: forget drops
// them, and a conversation not known is read.
type ackCursors map[string]ackCursor

type ackCursor struct {
	seq int64
	ok  bool // false: the conversation has no cursor
}

// learn records the cursors of every conversation of msgs: those missing
// from after have none.
func (c ackCursors) learn(msgs []wire.Message, after map[string]int64) {
	for _, m := range msgs {
		seq, ok := after[m.ConversationID]
		c[m.ConversationID] = ackCursor{seq, ok}
	}
}

func (c ackCursors) forget() { clear(c) }

// of returns conv's cursor (seq, ok as localstore.Store.Cursor gives them)
// and whether it is known.
func (c ackCursors) of(conv string) (seq int64, ok, known bool) {
	a, known := c[conv]
	return a.seq, a.ok, known
}
