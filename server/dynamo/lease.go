package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/chatterm/chat/server"
)

var _ server.Leaser = (*Store)(nil)

// leaseKey is the users-table marker item of the lease name (user ids cannot
// contain '#'): a table the archiver's nodes reach anyway, and no new table for
// a deployment to create.
func leaseKey(name string) item { return item{"user_id": sv("#lease#" + name)} }

// TakeLease is one conditional PutItem (1 WCU, taken or not): the item names
// its owner and expiry, and is replaced only if it is missing, ours, or
// expired by the caller's clock. Clocks between nodes differ by far less than
// a lease lasts (an archiver's is longer than its interval).
func (s *Store) TakeLease(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	taken := false
	err := s.do(ctx, "take lease "+name, func(ctx context.Context) error {
		it := leaseKey(name)
		it["owner"], it["expires_at"] = sv(owner), tv(until)
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(s.t.users),
			Item:                      it,
			ConditionExpression:       aws.String("attribute_not_exists(user_id) OR #o = :me OR expires_at < :now"),
			ExpressionAttributeNames:  map[string]string{"#o": "owner"},
			ExpressionAttributeValues: item{":me": sv(owner), ":now": tv(now)},
		})
		if isCondFailed(err) {
			taken = false
			return nil
		}
		taken = err == nil
		return err
	})
	return taken, err
}

// ReleaseLease deletes the item if owner still holds it (1 WCU).
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	return s.do(ctx, "release lease "+name, func(ctx context.Context) error {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 aws.String(s.t.users),
			Key:                       leaseKey(name),
			ConditionExpression:       aws.String("#o = :me"),
			ExpressionAttributeNames:  map[string]string{"#o": "owner"},
			ExpressionAttributeValues: item{":me": sv(owner)},
		})
		if isCondFailed(err) {
			return nil
		}
		return err
	})
}
