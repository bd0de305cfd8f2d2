package dynamo

import (
	"context"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// Mentions (docs/dynamodb.md, "Mentions"): the message item keeps its
// mentions (a list); the seq_nos that count go, in the send's transaction,
//   - for a member named by id, into their message_status item's
//     mention_seqs (a number set: an ADD retried adds nothing twice), one
//     item more in the transaction per member named;
//   - for @all and @here, into the conversation item's mention_all, which
//     the transaction updates anyway: no item more, whatever the group's size.
// The inbox reads both items already, so counting costs no read of its own.

const (
	mentionSeqsAttr = "mention_seqs"
	mentionAllAttr  = "mention_all"
)

// kindMention is a member's message_status item taking a mention.
const kindMention itemKind = 100

// mentionPlan is what msgs' mentions add: to the conversation (@all, @here)
// and to each member named (never the sender: nobody mentions themself).
func mentionPlan(msgs []server.Message) (all []int64, byUser map[string][]int64) {
	for _, m := range msgs {
		for _, name := range m.Mentions {
			switch {
			case name == wire.MentionAll || name == wire.MentionHere:
				if !slices.Contains(all, m.SeqNo) {
					all = append(all, m.SeqNo)
				}
			case name != m.SenderID:
				if byUser == nil {
					byUser = map[string][]int64{}
				}
				byUser[name] = append(byUser[name], m.SeqNo)
			}
		}
	}
	return all, byUser
}

func nsv(seqs []int64) types.AttributeValue {
	ss := make([]string, len(seqs))
	for i, s := range seqs {
		ss[i] = strconv.FormatInt(s, 10)
	}
	return &types.AttributeValueMemberNS{Value: ss}
}

func getNS(it item, name string) []int64 {
	v, ok := it[name].(*types.AttributeValueMemberNS)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(v.Value))
	for _, s := range v.Value {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// addMentionAll adds the @all/@here seq_nos to a conversation update's
// expression (SET ... [ADD ...]) and values.
func addMentionAll(expr string, vals item, all []int64) string {
	if len(all) == 0 {
		return expr
	}
	vals[":mention_all"] = nsv(all)
	return expr + " ADD " + mentionAllAttr + " :mention_all"
}

// mentionItems are the members' message_status updates. A row made here
// gets zero boundaries beside the set, so it reads as any status row does
// (RemoveParticipant's conditions compare them).
func (s *Store) mentionItems(convID string, byUser map[string][]int64) []planned {
	users := make([]string, 0, len(byUser))
	for u := range byUser {
		users = append(users, u)
	}
	slices.Sort(users)
	out := make([]planned, 0, len(users))
	for _, u := range users {
		out = append(out, planned{kind: kindMention, user: u, tx: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.t.status),
			Key:       item{"user_id": sv(u), "conversation_id": sv(convID)},
			UpdateExpression: aws.String("SET last_delivered_seq = if_not_exists(last_delivered_seq, :zero), " +
				"last_read_seq = if_not_exists(last_read_seq, :zero) ADD " + mentionSeqsAttr + " :seqs"),
			ExpressionAttributeValues: item{":zero": nv(0), ":seqs": nsv(byUser[u])},
		}}})
	}
	return out
}

// mentionsAttr is a message item's mentions, in order.
func mentionsAttr(names []string) types.AttributeValue {
	l := make([]types.AttributeValue, len(names))
	for i, n := range names {
		l[i] = sv(n)
	}
	return &types.AttributeValueMemberL{Value: l}
}

func getMentions(it item) []string {
	v, ok := it["mentions"].(*types.AttributeValueMemberL)
	if !ok || len(v.Value) == 0 {
		return nil
	}
	out := make([]string, 0, len(v.Value))
	for _, e := range v.Value {
		if s, ok := e.(*types.AttributeValueMemberS); ok {
			out = append(out, s.Value)
		}
	}
	return out
}

// entryMentions is a member's mention seq_nos, ascending: their own and the
// conversation's @all/@here ones sent since they joined (mention_joiners.go).
func entryMentions(conv, status item) []int64 {
	from := getN(status, mentionFromAttr)
	seqs := getNS(status, mentionSeqsAttr)
	for _, seq := range getNS(conv, mentionAllAttr) {
		if seq > from {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return slices.Compact(seqs)
}

// mentionAllAdminsAttr on the conversation item: @all and @here for admins
// only. Read only when a message holds one of them, so a send without
// costs no read for it.
const mentionAllAdminsAttr = "mention_all_admins"

func (s *Store) MentionAllAdminsOnly(ctx context.Context, convID string) (bool, error) {
	var on bool
	err := s.do(ctx, "mention setting", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(convID)},
			ProjectionExpression: aws.String(mentionAllAdminsAttr),
		})
		if err != nil {
			return err
		}
		on = getBool(out.Item, mentionAllAdminsAttr)
		return nil
	})
	return on, err
}

func (s *Store) SetMentionAllAdminsOnly(ctx context.Context, convID string, adminsOnly bool) error {
	return s.do(ctx, "set mention setting", func(ctx context.Context) error {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(convID)},
			UpdateExpression:          aws.String("SET " + mentionAllAdminsAttr + " = :on"),
			ConditionExpression:       aws.String("attribute_exists(conversation_id)"),
			ExpressionAttributeValues: item{":on": bv(adminsOnly)},
		})
		if isCondFailed(err) {
			return server.ErrNotFound
		}
		return err
	})
}

// DefaultKeepMentions is Options.KeepMentions' default: what a page or two of
// GET /v1/mentions shows of one conversation.
const DefaultKeepMentions = 100

// trimMentions adds to a status update (AdvanceStatus) the DELETE of the
// member's oldest mention seq_nos beyond the newest KeepMentions, those the
// new read boundary has passed: read, they no longer count, and only the
// newest are listed. An unread one is never dropped. A DELETE of given
// numbers leaves a mention a send adds meanwhile alone.
func (s *Store) trimMentions(in *dynamodb.UpdateItemInput, row item, read int64) {
	seqs := getNS(row, mentionSeqsAttr)
	if len(seqs) <= s.o.KeepMentions {
		return
	}
	slices.Sort(seqs)
	var old []int64
	for _, seq := range seqs[:len(seqs)-s.o.KeepMentions] {
		if seq <= read {
			old = append(old, seq)
		}
	}
	if len(old) == 0 {
		return
	}
	in.UpdateExpression = aws.String(*in.UpdateExpression + " DELETE " + mentionSeqsAttr + " :old")
	in.ExpressionAttributeValues[":old"] = nsv(old)
}
