package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/wire"
)

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func msg(conv string, seq int64, sender string) server.Message {
	return server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprint("m", seq), SenderID: sender,
		Content: fmt.Sprint("hello ", seq), Timestamp: t0.Add(time.Duration(seq) * time.Second)}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAppendOutOfOrder: a seq behind last_seq is refused whole (nothing moves
// backwards, no message is stored behind a newer one), and the re-planning of
// the send transaction keeps boundaries that moved ahead of the message.
func TestAppendOutOfOrder(t *testing.T) {
	s := open(t, dynamo.Options{})
	ctx := context.Background()
	conv := wire.DirectConversationID("alice", "bob")
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: t0},
		[]server.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}}))
	must(t, s.AppendMessage(ctx, msg(conv, 3, "alice"), []string{"bob"}))
	must(t, s.AppendMessage(ctx, msg(conv, 5, "alice"), []string{"bob"}))
	if err := s.AppendMessage(ctx, msg(conv, 4, "alice"), []string{"bob"}); !errors.Is(err, server.ErrSeqTaken) {
		t.Fatalf("append behind last_seq: %v, want ErrSeqTaken", err)
	}
	c, err := s.GetConversation(ctx, conv)
	must(t, err)
	if c.LastSeq != 5 || c.LastMessageBody != "hello 5" {
		t.Fatalf("conversation %+v, want last_seq 5 and its preview", c)
	}
	pend, err := s.ListPending(ctx, "bob")
	must(t, err)
	if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 3 {
		t.Fatalf("bob's pending %+v, want first 3", pend)
	}
	st, err := s.ListStatuses(ctx, conv, []string{"alice"})
	must(t, err)
	if st[0].LastReadSeq != 5 || st[0].LastDeliveredSeq != 5 {
		t.Fatalf("alice %+v, want 5/5", st[0])
	}
	if msgs, _ := s.ListMessages(ctx, conv, 0, 10); len(msgs) != 2 {
		t.Fatalf("refused append stored something: %+v", msgs)
	}
	// Bob acks 4: 5 is still pending.
	_, _, err = s.AdvanceStatus(ctx, "bob", conv, 4, 0)
	must(t, err)
	if pend, _ = s.ListPending(ctx, "bob"); len(pend) != 1 || pend[0].FirstUndeliveredSeq != 5 {
		t.Fatalf("bob's pending after ack 4: %+v, want first 5", pend)
	}
	// Bob has delivered 6 (say, after an ack) before his own message 6 is stored:
	// the reply still marks it read, and delivered stays.
	_, _, err = s.AdvanceStatus(ctx, "bob", conv, 7, 0)
	must(t, err)
	if pend, _ = s.ListPending(ctx, "bob"); len(pend) != 0 {
		t.Fatalf("bob's pending after ack 7: %+v, want none", pend)
	}
	must(t, s.AppendMessage(ctx, msg(conv, 6, "bob"), []string{"alice"}))
	st, err = s.ListStatuses(ctx, conv, []string{"bob"})
	must(t, err)
	if st[0].LastDeliveredSeq != 7 || st[0].LastReadSeq != 6 {
		t.Fatalf("bob %+v, want delivered 7 read 6", st[0])
	}
}

// TestAppendLargeGroup: a group too big for one transaction (100 items) keeps
// every write; what does not fit follows the commit.
func TestAppendLargeGroup(t *testing.T) {
	s := open(t, dynamo.Options{})
	ctx := context.Background()
	const n = 120
	var members []server.Participant
	var receivers []string
	for i := range n {
		u := fmt.Sprintf("u%03d", i)
		members = append(members, server.Participant{UserID: u, Role: wire.RoleMember, JoinedAt: t0})
		if i > 0 {
			receivers = append(receivers, u)
		}
	}
	must(t, s.CreateConversation(ctx, server.Conversation{ID: "g:big", Type: wire.Group, Name: "Big", CreatedAt: t0}, members))
	ps, err := s.ListParticipants(ctx, "g:big")
	must(t, err)
	if len(ps) != n {
		t.Fatalf("%d participants stored, want %d", len(ps), n)
	}
	must(t, s.AppendMessage(ctx, msg("g:big", 1, "u000"), receivers))
	for _, u := range []string{"u001", "u060", "u119"} {
		pend, err := s.ListPending(ctx, u)
		must(t, err)
		if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 1 {
			t.Fatalf("%s pending %+v", u, pend)
		}
		in, err := s.Inbox(ctx, u, 5)
		must(t, err)
		if len(in) != 1 || in[0].Conversation.LastSeq != 1 {
			t.Fatalf("%s inbox %+v", u, in)
		}
	}
}

// TestInboxOrder: the participants index follows the latest message.
func TestInboxOrder(t *testing.T) {
	s := open(t, dynamo.Options{})
	ctx := context.Background()
	var convs []string
	for i, other := range []string{"bob", "carol", "dave"} {
		c := wire.DirectConversationID("alice", other)
		convs = append(convs, c)
		must(t, s.CreateConversation(ctx, server.Conversation{ID: c, Type: wire.Direct, CreatedAt: t0.Add(time.Duration(i) * time.Second)},
			[]server.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: other, Role: wire.RoleMember}}))
	}
	order := func(want ...string) {
		t.Helper()
		in, err := s.Inbox(ctx, "alice", 10)
		must(t, err)
		var got []string
		for _, e := range in {
			got = append(got, e.Conversation.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("inbox %v, want %v", got, want)
		}
	}
	order(convs[2], convs[1], convs[0]) // by creation
	m := msg(convs[0], 1, "bob")
	m.Timestamp = t0.Add(time.Hour)
	must(t, s.AppendMessage(ctx, m, []string{"alice"}))
	order(convs[0], convs[2], convs[1])
	// A message with an older time (clock skew between nodes) moves nothing back.
	m = msg(convs[0], 2, "alice")
	m.Timestamp = t0
	must(t, s.AppendMessage(ctx, m, []string{"bob"}))
	order(convs[0], convs[2], convs[1])
}

// TestMessageRoundTrip: every field of a message comes back as stored.
func TestMessageRoundTrip(t *testing.T) {
	s := open(t, dynamo.Options{})
	ctx := context.Background()
	conv := wire.DirectConversationID("alice", "bob")
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: t0},
		[]server.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}}))
	m := msg(conv, 1, "alice")
	m.ReceiverID, m.Attachment, m.Content = "bob", "media/alice/1f3a.png", "héllo ☎\x00"
	must(t, s.AppendMessage(ctx, m, []string{"bob"}))
	got, err := s.ListMessages(ctx, conv, 0, 5)
	must(t, err)
	if len(got) != 1 || !reflect.DeepEqual(got[0], m) {
		t.Fatalf("stored %+v, want %+v", got, m)
	}
}
