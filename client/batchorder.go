package client

import (
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// deferStatus says whether a status frame that arrived inside a run of
// messages may be applied after the run instead of cutting it in two. In a
// group every member's ack moves their delivered boundary and comes to every
// member as a status frame, between the messages of a burst: applied in
// arrival order, a burst of 2,000 became hundreds of transactions of a few
// messages each. Another member's boundaries are a maximum taken column by
// column (ApplyStatuses), touching only their row, so applying them a few
// frames later ends in the same state. The user's own boundary is not
// deferred (it moves the inbox's unread count and its gaps, which a message
// event in the run reads), nor is anything across a membership event (the
// caller flushes before one: a member who leaves loses their row, which a
// boundary applied after would bring back).
func deferStatus(kind string, u localstore.StatusUpdate, self string) bool {
	return kind == wire.TypeMessage && u.Status.UserID != self
}
