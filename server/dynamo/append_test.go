package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	// Too many members to fold the sender's boundaries into the
	// conversation item: they are on the sender's row.
	st, err := s.ListStatuses(ctx, "g:big", []string{"u000"})
	must(t, err)
	if st[0].LastDeliveredSeq != 1 || st[0].LastReadSeq != 1 {
		t.Fatalf("sender's status %+v, want 1/1", st[0])
	}
}

// tableName is the store's table whose name ends in suffix.
func tableName(s *dynamo.Store, suffix string) string {
	for _, n := range s.TableNames() {
		if strings.HasSuffix(n, suffix) {
			return n
		}
	}
	return ""
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

// TestInboxIndexLag: messages within InboxIndexLag of the last index move
// leave the participants index alone, and Inbox still orders by the latest
// message, a page of one included.
func TestInboxIndexLag(t *testing.T) {
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter, InboxIndexLag: time.Hour})
	ctx := context.Background()
	var convs []string
	for i, other := range []string{"bob", "carol", "dave"} {
		c := wire.DirectConversationID("alice", other)
		convs = append(convs, c)
		must(t, s.CreateConversation(ctx, server.Conversation{ID: c, Type: wire.Direct, CreatedAt: t0},
			[]server.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: other, Role: wire.RoleMember}}))
		m := msg(c, 1, other)
		m.Timestamp = t0.Add(time.Duration(i+1) * time.Minute)
		must(t, s.AppendMessage(ctx, m, []string{"alice"}))
	}
	top := func(limit int, want ...string) {
		t.Helper()
		in, err := s.Inbox(ctx, "alice", limit)
		must(t, err)
		var got []string
		for _, e := range in {
			got = append(got, e.Conversation.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("inbox(%d) %v, want %v", limit, got, want)
		}
	}
	top(3, convs[2], convs[1], convs[0])
	// bob writes again 10 minutes on: within the lag, so his and alice's
	// index entries stay at minute 1, and no UpdateItem is made.
	meter.Reset()
	m := msg(convs[0], 2, "bob")
	m.Timestamp = t0.Add(10 * time.Minute)
	must(t, s.AppendMessage(ctx, m, []string{"alice"}))
	if ops := meter.Ops(); ops["UpdateItem"].Calls != 0 {
		t.Fatalf("a message within the lag moved index entries: %s", meter)
	}
	top(1, convs[0])
	top(2, convs[0], convs[2])
	top(3, convs[0], convs[2], convs[1])
	// Past the lag the entries move again.
	meter.Reset()
	m = msg(convs[1], 2, "carol")
	m.Timestamp = t0.Add(2 * time.Hour)
	must(t, s.AppendMessage(ctx, m, []string{"alice"}))
	if ops := meter.Ops(); ops["UpdateItem"].Calls != 2 || ops["UpdateItem"].Index != 4 {
		t.Fatalf("a message past the lag: %s, want 2 index moves", meter)
	}
	top(1, convs[1])
	top(3, convs[1], convs[0], convs[2])
}

// TestSenderStatusFolded: in a small conversation a sender's boundaries
// move on the conversation item, not a message_status row; every read sees
// them, and an ack never lowers them. A group too large to fold keeps the row.
func TestSenderStatusFolded(t *testing.T) {
	s := open(t, dynamo.Options{})
	ctx := context.Background()
	conv := wire.DirectConversationID("alice", "bob")
	must(t, s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: t0},
		[]server.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}}))
	must(t, s.AppendMessage(ctx, msg(conv, 1, "bob"), []string{"alice"}))
	must(t, s.AppendMessage(ctx, msg(conv, 2, "alice"), []string{"bob"}))
	out, err := s.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tableName(s, "message_status")),
		Key: map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "alice"}, "conversation_id": &types.AttributeValueMemberS{Value: conv}}})
	must(t, err)
	if out.Item != nil {
		t.Fatalf("alice's send wrote her message_status row: %v", out.Item)
	}
	st, err := s.ListStatuses(ctx, conv, []string{"alice", "bob"})
	must(t, err)
	if st[0].LastDeliveredSeq != 2 || st[0].LastReadSeq != 2 || st[1].LastReadSeq != 1 {
		t.Fatalf("statuses %+v, want alice 2/2, bob read 1", st)
	}
	in, err := s.Inbox(ctx, "alice", 5)
	must(t, err)
	if len(in) != 1 || in[0].Status.LastReadSeq != 2 {
		t.Fatalf("alice's inbox %+v, want read 2", in)
	}
	// Her ack of bob's message moves nothing; one of 3 moves delivery only.
	if st, changed, err := s.AdvanceStatus(ctx, "alice", conv, 1, 1); err != nil || changed || st.LastReadSeq != 2 {
		t.Fatalf("ack below her own message: %+v changed=%v %v", st, changed, err)
	}
	if st, changed, err := s.AdvanceStatus(ctx, "alice", conv, 3, 0); err != nil || !changed || st.LastDeliveredSeq != 3 || st.LastReadSeq != 2 {
		t.Fatalf("ack of 3: %+v changed=%v %v, want 3/2", st, changed, err)
	}
	// Her next message reads past the row again.
	must(t, s.AppendMessage(ctx, msg(conv, 4, "alice"), []string{"bob"}))
	if st, err = s.ListStatuses(ctx, conv, []string{"alice"}); err != nil || st[0].LastDeliveredSeq != 4 || st[0].LastReadSeq != 4 {
		t.Fatalf("after her message 4: %+v %v", st, err)
	}
}

// TestRemoveKeepsFoldedStatus: a member's boundary folded into the
// conversation item leaves it with them, onto their row: the item does not
// grow with past members; one added back starts at the join.
func TestRemoveKeepsFoldedStatus(t *testing.T) {
	s := open(t, dynamo.Options{})
	ctx := context.Background()
	members := []server.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}, {UserID: "carol", Role: wire.RoleMember}}
	must(t, s.CreateConversation(ctx, server.Conversation{ID: "g:fold", Type: wire.Group, CreatedAt: t0}, members))
	must(t, s.AppendMessage(ctx, msg("g:fold", 1, "carol"), []string{"alice", "bob"}))
	must(t, s.AppendMessage(ctx, msg("g:fold", 2, "alice"), []string{"bob", "carol"}))
	must(t, s.RemoveParticipant(ctx, "g:fold", "carol"))
	out, err := s.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tableName(s, "conversations")),
		Key: map[string]types.AttributeValue{"conversation_id": &types.AttributeValueMemberS{Value: "g:fold"}}})
	must(t, err)
	if _, ok := out.Item["sent:carol"]; ok {
		t.Fatalf("carol's boundary stayed on the conversation item after she left")
	}
	if _, ok := out.Item["sent:alice"]; !ok {
		t.Fatalf("alice's boundary is not on the conversation item: %v", out.Item)
	}
	// Her row holds what the item had: she sent 1, so 1/1.
	row, err := s.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tableName(s, "message_status")), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "carol"}, "conversation_id": &types.AttributeValueMemberS{Value: "g:fold"}}})
	must(t, err)
	for _, a := range []string{"last_delivered_seq", "last_read_seq"} {
		if n, ok := row.Item[a].(*types.AttributeValueMemberN); !ok || n.Value != "1" {
			t.Fatalf("carol's row after she left: %s = %v, want 1", a, row.Item[a])
		}
	}
	// Added back, she starts at the join: the newest seq_no, 2, not unread.
	must(t, s.AddParticipants(ctx, "g:fold", members[2:]))
	st, err := s.ListStatuses(ctx, "g:fold", []string{"carol"})
	must(t, err)
	if st[0].LastDeliveredSeq != 2 || st[0].LastReadSeq != 2 {
		t.Fatalf("carol back: %+v, want 2/2 (her join)", st[0])
	}
	if err := s.RemoveParticipant(ctx, "g:fold", "dave"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("removing a non-member: %v", err)
	}
}
