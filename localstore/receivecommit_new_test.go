package localstore

import (
	"testing"

	"github.com/chatterm/chat/wire"
)

// receiveCommit is the session's use since session 21: everything from the put.
func receiveCommit(b *testing.B, s *Store, ms []wire.Message) {
	put, err := s.PutBatch(ctx, ms...)
	if err != nil || len(put.Senders) != 1 || put.Cursors[dm] != ms[len(ms)-1].SeqNo {
		b.Fatalf("put: %+v, %v", put, err)
	}
}
