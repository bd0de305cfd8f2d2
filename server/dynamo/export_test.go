package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// SetStoreSchema records v as the schema of the tables (the #store item),
// as a newer build would: for tests of the refusal.
func (s *Store) SetStoreSchema(ctx context.Context, v int64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.t.users),
		Key:                       item{"user_id": sv(storeKey)},
		UpdateExpression:          aws.String("SET #s = :v"),
		ExpressionAttributeNames:  map[string]string{"#s": "schema"},
		ExpressionAttributeValues: item{":v": nv(v)},
	})
	return err
}

// ScanMessages reads the whole messages table as the archiver did before it
// was incremental (an eventually consistent Scan, unfiltered: a filter does
// not lower what a Scan is billed), so a Meter can price it.
func (s *Store) ScanMessages(ctx context.Context) (int, error) {
	n := 0
	var start item
	for {
		page, err := s.db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(s.t.messages), ExclusiveStartKey: start})
		if err != nil {
			return n, err
		}
		n += len(page.Items)
		if start = page.LastEvaluatedKey; len(start) == 0 {
			return n, nil
		}
	}
}

// DropTokensIndex removes the tokens table's index by user, as tables made
// before it lack it: for the upgrade test.
func (s *Store) DropTokensIndex(ctx context.Context) error {
	_, err := s.db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(s.t.tokens),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{
			IndexName: aws.String(tokensByUserIndex)}}},
	})
	return err
}

// SetLegacyCarrier makes an upload look as items written before the
// carriers set did: sent, its first carrier in carrier, shared if another
// message sent it too.
func (s *Store) SetLegacyCarrier(ctx context.Context, mediaID, carrier string, shared bool) error {
	expr, vals := "SET #s = :sent, carrier = :c REMOVE unsent_shard", item{":sent": sv(stateSent), ":c": sv(carrier)}
	if shared {
		expr, vals[":t"] = "SET #s = :sent, carrier = :c, #sh = :t REMOVE unsent_shard", bv(true)
	}
	names := map[string]string{"#s": "state"}
	if shared {
		names["#sh"] = "shared"
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(mediaID)},
		UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
	return err
}
