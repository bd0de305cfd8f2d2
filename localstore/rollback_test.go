package localstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// rolledBackCache is bob's cache of a direct conversation with alice: 1–13,
// the odd ones alice's, 12 his own, 13 from alice ("the lost one", message_id
// X), cursor and every boundary at 13; and an unsent message of bob's.
func rolledBackCache(t *testing.T) (*localstore.Store, string) {
	t.Helper()
	ctx := context.Background()
	st := localstore.MustOpen(t, localstore.Options{UserID: "bob"})
	conv := wire.DirectConversationID("alice", "bob")
	ts := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var msgs []wire.Message
	for seq := int64(1); seq <= 13; seq++ {
		m := wire.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprintf("m%02d", seq), SenderID: "alice",
			Content: fmt.Sprintf("message %d", seq), Timestamp: ts.Add(time.Duration(seq) * time.Second)}
		if seq%2 == 0 {
			m.SenderID = "bob"
		}
		if seq == 12 {
			m.Content, m.ReplyTo = "my reply to eleven", 11
		}
		if seq == 13 {
			m.MessageID, m.Content = "X", "the lost one"
		}
		msgs = append(msgs, m)
	}
	if _, err := st.PutMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	for _, s := range []wire.MemberStatus{{UserID: "bob", LastDeliveredSeq: 13, LastReadSeq: 13}, {UserID: "alice", LastDeliveredSeq: 13, LastReadSeq: 13}} {
		if _, err := st.ApplyStatus(ctx, conv, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Enqueue(ctx, conv, "typed-offline", "typed while the server was down"); err != nil {
		t.Fatal(err)
	}
	return st, conv
}

// The server restored to seq 11 and then stored Y as 12 and Z as 13: bob's 12
// and 13 leave the cache, his own 12 goes back to the outbox ahead of what he
// typed since, and nothing stays above 11 until the server's messages come.
func TestApplyRollback(t *testing.T) {
	ctx := context.Background()
	st, conv := rolledBackCache(t)

	// Seen live, Z is refused: the cache holds 13 under X.
	z := wire.Message{ConversationID: conv, SeqNo: 13, MessageID: "Z", SenderID: "alice", Content: "the new one", Timestamp: time.Now().UTC()}
	added, conflicts, err := st.PutMessagesChecked(ctx, z)
	if err != nil || len(added) != 0 || len(conflicts) != 1 || conflicts[0].MessageID != "Z" {
		t.Fatalf("a message under a cached seq_no with another message_id: added %v, conflicts %v, %v", added, conflicts, err)
	}
	if m, err := st.Message(ctx, conv, 13); err != nil || m.MessageID != "X" {
		t.Fatalf("13 after the conflict: %+v, %v", m, err)
	}

	res, err := st.ApplyRollback(ctx, localstore.Rollback{ConversationID: conv, Last: 13, Drop: []int64{12, 13}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dropped) != 2 || res.Dropped[0].SeqNo != 12 || res.Dropped[1].MessageID != "X" || res.Kept != 11 {
		t.Fatalf("rollback: dropped %+v, kept %d", res.Dropped, res.Kept)
	}
	if len(res.Requeued) != 1 || res.Requeued[0].MessageID != "m12" || res.Requeued[0].ReplyTo != 11 {
		t.Fatalf("requeued: %+v", res.Requeued)
	}
	ob, err := st.Outbox(ctx, "")
	if err != nil || len(ob) != 2 || ob[0].MessageID != "m12" || ob[1].MessageID != "typed-offline" {
		t.Fatalf("outbox after the rollback: %+v, %v (want the lost message first, then the one typed later)", ob, err)
	}
	if cur, _, err := st.Cursor(ctx, conv); err != nil || cur != 11 {
		t.Fatalf("cursor after the rollback: %d, %v", cur, err)
	}
	sts, err := st.Statuses(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sts {
		if s.LastDeliveredSeq > 11 || s.LastReadSeq > 11 {
			t.Fatalf("a boundary above what the server has: %+v", s)
		}
	}
	inbox, err := st.Inbox(ctx, 0)
	if err != nil || len(inbox) != 1 || inbox[0].LastSeq != 11 || inbox[0].LastReadSeq != 11 || inbox[0].LastMessageBody != "message 11" {
		t.Fatalf("inbox after the rollback: %+v, %v", inbox, err)
	}
	if hits, err := st.Search(ctx, "lost", "", 10); err != nil || len(hits) != 0 {
		t.Fatalf("search for the lost message: %+v, %v", hits, err)
	}

	// The server's messages now go in, and count as unread.
	y := wire.Message{ConversationID: conv, SeqNo: 12, MessageID: "Y", SenderID: "alice", Content: "another twelve", Timestamp: time.Now().UTC()}
	added, conflicts, err = st.PutMessagesChecked(ctx, y, z)
	if err != nil || len(added) != 2 || len(conflicts) != 0 {
		t.Fatalf("the server's 12 and 13: added %v, conflicts %v, %v", added, conflicts, err)
	}
	if hits, err := st.Search(ctx, "new", "", 10); err != nil || len(hits) != 1 || hits[0].Message.MessageID != "Z" {
		t.Fatalf("search for the new 13: %+v, %v", hits, err)
	}
	inbox, err = st.Inbox(ctx, 0)
	if err != nil || inbox[0].Unread != 2 {
		t.Fatalf("unread after the server's messages: %+v, %v", inbox, err)
	}
	if cur, _, err := st.Cursor(ctx, conv); err != nil || cur != 13 {
		t.Fatalf("cursor after the server's messages: %d, %v", cur, err)
	}

	// Applied again (another process, a retry), it requeues nothing twice.
	res, err = st.ApplyRollback(ctx, localstore.Rollback{ConversationID: conv, Last: 13})
	if err != nil || len(res.Dropped) != 0 || len(res.Requeued) != 0 {
		t.Fatalf("a second rollback with nothing to drop: %+v, %v", res, err)
	}
}

// The server kept 1–11 and nothing since: everything above goes, with no
// list of seq_nos needed.
func TestApplyRollbackAboveLast(t *testing.T) {
	ctx := context.Background()
	st, conv := rolledBackCache(t)
	res, err := st.ApplyRollback(ctx, localstore.Rollback{ConversationID: conv, Last: 11,
		Current: []wire.Message{{ConversationID: conv, SeqNo: 11, MessageID: "m11", SenderID: "alice", Content: "message 11 as the server has it", UpdatedSeq: 11}}})
	if err != nil || len(res.Dropped) != 2 || res.Kept != 11 {
		t.Fatalf("rollback to 11: %+v, %v", res, err)
	}
	if m, err := st.Message(ctx, conv, 11); err != nil || m.Content != "message 11 as the server has it" {
		t.Fatalf("11 after the rollback: %+v, %v", m, err)
	}
	if _, err := st.ApplyRollback(ctx, localstore.Rollback{ConversationID: "nonsense", Last: 1}); err == nil {
		t.Fatal("a rollback of a malformed conversation id was accepted")
	}
	if id, err := st.StoreID(ctx); err != nil || id != "" {
		t.Fatalf("store id of a new cache: %q, %v", id, err)
	}
	if err := st.SetStoreID(ctx, "abc"); err != nil {
		t.Fatal(err)
	}
	if id, err := st.StoreID(ctx); err != nil || id != "abc" {
		t.Fatalf("store id: %q, %v", id, err)
	}
}

// The server answers a send with a seq_no the cache holds another message
// under: the answer wins (the server has just stored it there), the other
// one goes, and the caller is told to reconcile.
func TestCompleteSendReplacesAMessageTheServerLost(t *testing.T) {
	ctx := context.Background()
	st, conv := rolledBackCache(t)
	done, err := st.CompleteSends(ctx, wire.SendResponse{ConversationID: conv, SeqNo: 13, MessageID: "typed-offline", Timestamp: time.Now().UTC()})
	if err != nil || len(done) != 1 || done[0].Err != nil || !done[0].First || !done[0].Replaced {
		t.Fatalf("complete a send under a seq_no held by another message: %+v, %v", done, err)
	}
	if m, err := st.Message(ctx, conv, 13); err != nil || m.MessageID != "typed-offline" {
		t.Fatalf("13 after the answer: %+v, %v", m, err)
	}
	if hits, err := st.Search(ctx, "lost", "", 10); err != nil || len(hits) != 0 {
		t.Fatalf("search for the replaced message: %+v, %v", hits, err)
	}
	// An ordinary answer replaces nothing.
	if _, err := st.Enqueue(ctx, conv, "next", "and the next one"); err != nil {
		t.Fatal(err)
	}
	done, err = st.CompleteSends(ctx, wire.SendResponse{ConversationID: conv, SeqNo: 14, MessageID: "next", Timestamp: time.Now().UTC()})
	if err != nil || done[0].Replaced || !done[0].First {
		t.Fatalf("an ordinary answer: %+v, %v", done, err)
	}
}
