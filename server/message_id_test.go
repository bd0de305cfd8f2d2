package server_test

import (
	"context"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// A batch of sends (the WebSocket worker's) holding another member's
// message_id: that one is refused with message_id_taken and the rest are
// stored, whether the store's duplicate check finds it (first_try: no look-up
// before the write) in one queued write or in a batch written in parts under
// the lock, or the look-up before the write does.
func TestBatchWithAnotherMembersMessageID(t *testing.T) {
	for _, c := range []struct {
		name      string
		firstTry  bool
		maxAppend int
	}{{"looked up", false, 0}, {"queued write", true, 0}, {"batch in parts", true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			store := &faultyWrites{Store: openStore(t), maxAppend: c.maxAppend}
			svc := serviceOn(t, store, server.Config{SendRate: -1})
			registerAliceAndBob(t, svc)
			conv := wire.DirectConversationID("alice", "bob")
			bobs, _, err := svc.Send(ctx, "bob", conv, wire.SendRequest{MessageID: "release-7", Content: "all good"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			reqs := []wire.SendRequest{{MessageID: "a-1", Content: "one"}, {MessageID: "release-7", Content: "BROKEN"}, {MessageID: "a-2", Content: "two"}}
			for i := range reqs {
				reqs[i].FirstTry = c.firstTry
			}
			res := svc.SendMany(ctx, "alice", conv, reqs, nil)
			if wire.ErrorCode(res[1].Err) != wire.CodeMessageIDTaken || res[1].Resp.SeqNo != 0 {
				t.Fatalf("the taken id: %+v, want message_id_taken and no seq_no", res[1])
			}
			for _, i := range []int{0, 2} {
				if res[i].Err != nil || !res[i].Created || res[i].Resp.SeqNo <= bobs.SeqNo {
					t.Fatalf("%s: %+v, want stored after bob's", reqs[i].MessageID, res[i])
				}
			}
			h, err := svc.History(ctx, "bob", conv, 0, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Messages) != 3 {
				t.Fatalf("stored %+v, want bob's and alice's two", h.Messages)
			}
			for _, m := range h.Messages {
				if m.MessageID == "release-7" && (m.SenderID != "bob" || m.Content != "all good") {
					t.Fatalf("release-7 is %+v", m)
				}
			}
		})
	}
}
