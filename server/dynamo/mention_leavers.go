package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A member who leaves keeps the @all/@here mentions they had (the SQLite
// store keeps its per-member rows, and GET /v1/mentions lists them; storetest
// MentionJoiners). Their count of the conversation's mention_all starts at
// mention_from, which a rejoin moves to the new join point, so those seq_nos
// are copied into the leaver's own mention_seqs in the leaving write: the
// @all seq_nos above their mention_from. It costs the leave event one read
// of the conversation item and the leavers' status items (one
// BatchGetItem), and an item more in its transaction per leaver with any.

// leaverMentionFolds are the status updates that give each of users (leaving
// convID) the conversation's @all/@here seq_nos since they joined.
func (s *Store) leaverMentionFolds(ctx context.Context, convID string, users []string) ([]*types.Update, error) {
	keys := map[string][]item{s.t.conversations: {{"conversation_id": sv(convID)}}}
	for _, u := range users {
		keys[s.t.status] = append(keys[s.t.status], item{"user_id": sv(u), "conversation_id": sv(convID)})
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("read the @all mentions of those leaving %s: %w", convID, err)
	}
	var conv item
	if cs := got[s.t.conversations]; len(cs) > 0 {
		conv = cs[0]
	}
	all := getNS(conv, mentionAllAttr)
	if len(all) == 0 {
		return nil, nil
	}
	rows := map[string]item{}
	for _, r := range got[s.t.status] {
		rows[getS(r, "user_id")] = r
	}
	var out []*types.Update
	for _, u := range users {
		if up := s.mentionFold(convID, u, all, rows[u]); up != nil {
			out = append(out, up)
		}
	}
	return out, nil
}

// mentionFold adds to user's own mention_seqs the seq_nos of all (the
// conversation's mention_all) above their row's mention_from; nil when
// there are none. An ADD of a number set adds nothing twice, so a retried
// transaction is harmless.
func (s *Store) mentionFold(convID, user string, all []int64, row item) *types.Update {
	from := getN(row, mentionFromAttr)
	var seqs []int64
	for _, seq := range all {
		if seq > from {
			seqs = append(seqs, seq)
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	return &types.Update{
		TableName: aws.String(s.t.status),
		Key:       item{"user_id": sv(user), "conversation_id": sv(convID)},
		UpdateExpression: aws.String("SET last_delivered_seq = if_not_exists(last_delivered_seq, :zero), " +
			"last_read_seq = if_not_exists(last_read_seq, :zero) ADD " + mentionSeqsAttr + " :folded"),
		ExpressionAttributeValues: item{":zero": nv(0), ":folded": nsv(seqs)},
	}
}
