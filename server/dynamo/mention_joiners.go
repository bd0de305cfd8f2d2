package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// A mention counts only for who was a member when it was sent (the SQLite
// store writes @all rows for the members of the moment). The conversation's
// mention_all holds every @all/@here seq_no, so a member's message_status
// item keeps mentionFromAttr, the conversation's seq_no when they joined:
// entryMentions counts only the mention_all seq_nos above it. It lives on the
// status item because the inbox reads that one anyway (the participants
// index projects keys only), so the rule costs no read.
const mentionFromAttr = "mention_from"

// joinStatusUpdate starts user's mention count in convID after seq, and their
// boundaries at seq: the history before they came is theirs to scroll, not
// unread news, and the others' ticks on it do not fall back to one because a
// member joined who never got it (the SQLite store's startBoundaries). A
// member added back gets their new join point: what was sent while they were
// away never counts; the @all they had before leaving were copied into their
// own mention_seqs when they left (mention_leavers.go). Their old boundaries
// are below seq (they left before it), so SET moves nothing back.
func (s *Store) joinStatusUpdate(convID, user string, seq int64) *types.Update {
	return &types.Update{
		TableName: aws.String(s.t.status),
		Key:       item{"user_id": sv(user), "conversation_id": sv(convID)},
		UpdateExpression: aws.String("SET last_delivered_seq = :from, last_read_seq = :from, " +
			mentionFromAttr + " = :from"),
		ExpressionAttributeValues: item{":from": nv(seq)},
	}
}

// setMentionFrom writes the join point of members AddParticipants added, a
// few at a time.
func (s *Store) setMentionFrom(ctx context.Context, convID string, users []string, seq int64) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, u := range users {
		g.Go(func() error {
			up := s.joinStatusUpdate(convID, u, seq)
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: up.TableName, Key: up.Key,
				UpdateExpression: up.UpdateExpression, ExpressionAttributeValues: up.ExpressionAttributeValues})
			if err != nil {
				return fmt.Errorf("mention start of %s: %w", u, err)
			}
			return nil
		})
	}
	return g.Wait()
}
