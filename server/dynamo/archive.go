package dynamo

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/chatterm/chat/server"
)

var _ server.ColdStore = (*Store)(nil)

// archiveScan is where the archiver's scan of the messages table stands, so that
// consecutive ListArchivable calls continue it instead of starting over: one pass
// over the table costs one full scan, however many batches it takes.
type archiveScan struct {
	mu   sync.Mutex
	next item // ExclusiveStartKey; nil: from the start
}

// ListArchivable scans the messages table (the archiver runs in the background,
// never on a request path) for messages older than cutoff whose content is still
// in the table. docs/dynamodb.md discusses the cost and the index that would
// replace the scan on a very large table.
func (s *Store) ListArchivable(ctx context.Context, cutoff time.Time, limit int) ([]server.Message, error) {
	if limit < 1 {
		return nil, nil
	}
	s.scan.mu.Lock()
	defer s.scan.mu.Unlock()
	var out []server.Message
	err := s.do(ctx, "list archivable", func(ctx context.Context) error {
		for {
			page, err := s.db.Scan(ctx, &dynamodb.ScanInput{
				TableName:                 aws.String(s.t.messages),
				FilterExpression:          aws.String("ts < :cutoff AND attribute_not_exists(s3_ref) AND attribute_not_exists(kind) AND attribute_not_exists(deleted)"),
				ExpressionAttributeValues: item{":cutoff": tv(cutoff)},
				ExclusiveStartKey:         s.scan.next,
				Limit:                     aws.Int32(int32(min(limit-len(out), 1000))), // never past what is returned
			})
			if err != nil {
				return err
			}
			for _, it := range page.Items {
				out = append(out, messageFrom(it))
			}
			s.scan.next = page.LastEvaluatedKey
			if len(page.LastEvaluatedKey) == 0 || len(out) >= limit {
				return nil
			}
		}
	})
	return out, err
}

// MarkArchived removes the content and records the blob key; the message keeps
// its key, sender, timestamp and ids. Only if it is still as listed.
func (s *Store) MarkArchived(ctx context.Context, m server.Message, ref string) error {
	return s.do(ctx, "mark archived", func(ctx context.Context) error {
		cond, vals := unchanged(m.UpdatedSeq)
		vals[":r"] = sv(ref)
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.t.messages),
			Key:                       item{"conversation_id": sv(m.ConversationID), "seq_no": nv(m.SeqNo)},
			UpdateExpression:          aws.String("SET s3_ref = :r REMOVE content"),
			ConditionExpression:       aws.String("attribute_exists(seq_no) AND attribute_not_exists(deleted) AND " + cond),
			ExpressionAttributeValues: vals,
		})
		if !isCondFailed(err) {
			return err
		}
		_, found, gerr := s.getItem(ctx, s.t.messages, item{"conversation_id": sv(m.ConversationID), "seq_no": nv(m.SeqNo)})
		switch {
		case gerr != nil:
			return gerr
		case !found:
			return server.ErrNotFound
		}
		return server.ErrTargetChanged
	})
}
