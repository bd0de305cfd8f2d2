package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// channelDirectory is the participants-table partition that lists the
// channels: one item per channel (user_id: its conversation id; its name,
// topic and creation time), written with the channel and with every rename
// or topic change in the same transaction. Listing is a Query on the one
// partition, paged by conversation id: no scan, and no read of a group or
// direct conversation. Its items have no activity attribute, so the
// by_user_activity index never holds them. Conversation ids start with "g:"
// or "dm:", so the key cannot be a conversation's.
const channelDirectory = "#channels"

func (s *Store) directoryPut(c server.Conversation) *types.Put {
	return &types.Put{TableName: aws.String(s.t.participants), Item: item{
		"conversation_id": sv(channelDirectory), "user_id": sv(c.ID),
		"name": sv(c.Name), "topic": sv(c.Topic), "created_at": tv(c.CreatedAt),
	}}
}

var _ server.ChannelStore = (*Store)(nil)

// ListChannels queries the directory partition.
func (s *Store) ListChannels(ctx context.Context, after string, limit int) ([]server.Conversation, error) {
	var out []server.Conversation
	err := s.do(ctx, "list channels", func(ctx context.Context) error {
		out = out[:0]
		in := &dynamodb.QueryInput{
			TableName:                 aws.String(s.t.participants),
			KeyConditionExpression:    aws.String("conversation_id = :d"),
			ExpressionAttributeValues: item{":d": sv(channelDirectory)},
			Limit:                     aws.Int32(int32(limit)),
		}
		if after != "" { // a key condition cannot compare with ""
			in.KeyConditionExpression = aws.String("conversation_id = :d AND user_id > :after")
			in.ExpressionAttributeValues[":after"] = sv(after)
		}
		return s.queryEach(ctx, in, func(it item) bool {
			out = append(out, server.Conversation{ID: getS(it, "user_id"), Type: wire.Channel,
				Name: getS(it, "name"), Topic: getS(it, "topic"), CreatedAt: getT(it, "created_at")})
			return len(out) < limit
		})
	})
	return out, err
}

// membershipSet is what a membership event adds to its conversation update:
// the name or topic it sets, and its line as the preview of a conversation
// with no message yet (convFrom reads it only then; DynamoDB cannot set an
// attribute on a condition of its own inside one update).
func membershipSet(m server.Message, vals item, names *map[string]string) string {
	if !wire.IsMembershipKind(m.Kind) {
		return ""
	}
	set := ", event_body = :eb"
	vals[":eb"] = sv(m.Preview())
	name := func(attr string) string {
		if *names == nil {
			*names = map[string]string{}
		}
		(*names)["#"+attr] = attr
		return "#" + attr
	}
	switch m.Kind {
	case wire.KindRenamed:
		set += ", " + name("name") + " = :name"
		vals[":name"] = sv(m.Content)
	case wire.KindTopic:
		set += ", " + name("topic") + " = :topic"
		vals[":topic"] = sv(m.Content)
	}
	return set
}

// membershipItems are the writes of the change a membership event records
// (server/membership_events.go has the rules), each conditioned on the
// members being as the Service saw them: a failed condition cancels the
// transaction, and AppendMessage answers ErrTargetChanged.
//
// A member who leaves keeps their sent:<user> attribute on the conversation
// item, if they had one (RemoveParticipant moves it to their message_status
// row): it only ever reads as a boundary at or below their row's, so it
// changes nothing, and costs at most 41 bytes of the item per such member.
func (s *Store) membershipItems(ctx context.Context, m server.Message) ([]planned, error) {
	var out []planned
	add := func(w types.TransactWriteItem) { out = append(out, planned{kind: kindMembership, tx: w}) }
	for _, u := range m.JoiningSubjects() {
		p := server.Participant{ConversationID: m.ConversationID, UserID: u, Role: wire.RoleMember, JoinedAt: m.Timestamp}
		add(types.TransactWriteItem{Put: s.participantPut(p, ns(m.Timestamp))})
		add(types.TransactWriteItem{Update: s.joinStatusUpdate(m.ConversationID, u, m.SeqNo)})
	}
	if leaving := m.LeavingSubjects(); len(leaving) > 0 {
		folds, err := s.leaverMentionFolds(ctx, m.ConversationID, leaving)
		if err != nil {
			return nil, err
		}
		for _, up := range folds {
			add(types.TransactWriteItem{Update: up}) // mention_leavers.go
		}
	}
	for _, u := range m.LeavingSubjects() {
		add(types.TransactWriteItem{Delete: &types.Delete{
			TableName:           aws.String(s.t.participants),
			Key:                 item{"conversation_id": sv(m.ConversationID), "user_id": sv(u)},
			ConditionExpression: aws.String("attribute_exists(user_id)"),
		}})
		add(types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.t.pending),
			Key:       item{"receiver_id": sv(u), "conversation_id": sv(m.ConversationID)},
		}})
	}
	switch m.Kind {
	case wire.KindAdminGranted, wire.KindAdminRevoked:
		role := wire.RoleAdmin
		if m.Kind == wire.KindAdminRevoked {
			role = wire.RoleMember
		}
		for _, u := range m.Subjects() {
			add(types.TransactWriteItem{Update: &types.Update{
				TableName:                 aws.String(s.t.participants),
				Key:                       item{"conversation_id": sv(m.ConversationID), "user_id": sv(u)},
				UpdateExpression:          aws.String("SET #role = :r"),
				ConditionExpression:       aws.String("attribute_exists(user_id)"),
				ExpressionAttributeNames:  map[string]string{"#role": "role"},
				ExpressionAttributeValues: item{":r": sv(role)},
			}})
		}
	case wire.KindRenamed, wire.KindTopic:
		// Only a channel is in the directory; which this is, the
		// conversation says (a rename is rare: one read is no cost).
		c, err := s.getConversation(ctx, m.ConversationID, true)
		if err != nil {
			return nil, fmt.Errorf("read the conversation a %s changes: %w", m.Kind, err)
		}
		if c.Type == wire.Channel {
			attr := "name"
			if m.Kind == wire.KindTopic {
				attr = "topic"
			}
			add(types.TransactWriteItem{Update: &types.Update{
				TableName:                 aws.String(s.t.participants),
				Key:                       item{"conversation_id": sv(channelDirectory), "user_id": sv(m.ConversationID)},
				UpdateExpression:          aws.String("SET #a = :v"),
				ConditionExpression:       aws.String("attribute_exists(user_id)"),
				ExpressionAttributeNames:  map[string]string{"#a": attr},
				ExpressionAttributeValues: item{":v": sv(m.Content)},
			}})
		}
	}
	return out, nil
}
