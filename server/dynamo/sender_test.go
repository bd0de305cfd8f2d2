package dynamo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
)

// An idempotency record written before records kept their sender (no
// sender_id) still tells whose the message_id is: SentMessages reads the
// sender from the message, so the sender's resend is not refused as another
// member's.
func TestSentMessagesOfRecordsWithoutSender(t *testing.T) {
	ctx := context.Background()
	s := open(t, dynamo.Options{})
	c := server.Conversation{ID: "dm:alice:bob", Type: "direct", CreatedAt: time.Now().UTC()}
	if err := s.CreateConversation(ctx, c, []server.Participant{
		{ConversationID: c.ID, UserID: "alice", Role: "member", JoinedAt: c.CreatedAt},
		{ConversationID: c.ID, UserID: "bob", Role: "member", JoinedAt: c.CreatedAt}}); err != nil {
		t.Fatal(err)
	}
	m := server.Message{ConversationID: c.ID, SeqNo: 1, MessageID: "old-1", SenderID: "alice", ReceiverID: "bob",
		Content: "hi", Timestamp: time.Now().UTC().Truncate(time.Microsecond)}
	if err := s.AppendMessage(ctx, m, []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	var table string
	for _, n := range s.TableNames() {
		if strings.HasSuffix(n, "message_ids") {
			table = n
		}
	}
	if _, err := s.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"conversation_id": &types.AttributeValueMemberS{Value: c.ID},
			"message_id":      &types.AttributeValueMemberS{Value: m.MessageID}},
		UpdateExpression: aws.String("REMOVE sender_id")}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SentMessages(ctx, c.ID, []string{m.MessageID})
	if err != nil {
		t.Fatal(err)
	}
	if g := got[m.MessageID]; g.SenderID != "alice" || g.SeqNo != 1 || !g.Timestamp.Equal(m.Timestamp) {
		t.Fatalf("SentMessages of an old record: %+v", g)
	}
}
