package dynamo

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatterm/chat/server"
)

// The conversation item's mention_all gains a seq_no with every @all and
// @here, and every send writes that item: unbounded, it would make each send
// of the conversation cost more write units as the set grew (a write is
// billed by the item's size, 1 KB a unit). It keeps the newest KeepMentions
// (the members' own mention_seqs keep as many, mentions.go): what a page or
// two of GET /v1/mentions shows of a conversation, and the unread count of
// any member fewer than that many @all behind. A member further behind
// counts at most KeepMentions of them until they read on (the count of
// their own mentions by id is kept whole); one leaving takes theirs along
// first (mention_leavers.go).
//
// The trim cannot go in the send's own update (an ADD and a DELETE of one
// attribute in one expression are refused), so a send that added an @all
// reads the set back after its commit (an eventually consistent GetItem of
// one attribute: half a read unit) and, past KeepMentions by a quarter more,
// deletes the oldest: one write per quarter of KeepMentions @all sends. A
// DELETE of given numbers leaves an @all added meanwhile alone, and one that
// fails is done by a later @all's.

// mentionAllSlack is how far past KeepMentions the set grows before a trim.
func (s *Store) mentionAllSlack() int { return max(s.o.KeepMentions/4, 1) }

// boundMentionAll trims convID's mention_all after msgs, just stored, when
// one of them added to it. The messages are stored whatever happens here.
func (s *Store) boundMentionAll(ctx context.Context, msgs []server.Message) {
	all, _ := mentionPlan(msgs)
	if len(all) == 0 {
		return
	}
	convID := msgs[0].ConversationID
	err := s.do(ctx, "trim mention_all", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(convID)},
			ProjectionExpression: aws.String(mentionAllAttr),
		})
		if err != nil {
			return err
		}
		seqs := getNS(out.Item, mentionAllAttr)
		if len(seqs) <= s.o.KeepMentions+s.mentionAllSlack() {
			return nil
		}
		slices.Sort(seqs)
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(convID)},
			UpdateExpression:          aws.String("DELETE " + mentionAllAttr + " :old"),
			ConditionExpression:       aws.String("attribute_exists(conversation_id)"),
			ExpressionAttributeValues: item{":old": nsv(seqs[:len(seqs)-s.o.KeepMentions])},
		})
		if isCondFailed(err) {
			return nil // the conversation is gone
		}
		return err
	})
	if err != nil {
		s.log.Warn("trim a conversation's @all mentions; a later @all tries again", "conversation", convID, "err", err)
	}
}
