package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// tokensByUserIndex is the tokens table's GSI of a user's tokens: (user_id),
// keys only. Disabling an account, enabling it again and an admin's session
// end find the user's tokens with one Query on it, whose cost follows the
// user's tokens, instead of a Scan whose cost follows every token of every
// user (docs/dynamodb.md, "A user's tokens").
const tokensByUserIndex = "tokens_by_user"

var tokensByUserAttrs = []types.AttributeDefinition{
	{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS},
}

func tokensByUserDef() types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(tokensByUserIndex),
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		// The hash is the table's key, so it is in every entry: all the
		// callers need, and the smallest entry a token's write adds.
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
	}
}

// userTokenHashes lists the hashes of userID's tokens from the index; on
// tables made before it (no --create-tables since), from a Scan of every
// token, as before the index: an admin disabling an account must not be
// refused for want of an index, with the account already marked disabled.
//
// The index is eventually consistent: a token put a moment before may be
// missing from it. That widens by the index's lag (usually well under a
// second) a race every read here already had: a login that checked the
// account before it was disabled and puts its token after the list was read.
func (s *Store) userTokenHashes(ctx context.Context, userID string) ([]string, error) {
	var hashes []string
	missing := false
	err := s.do(ctx, "list tokens of a user", func(ctx context.Context) error {
		hashes = hashes[:0]
		in := &dynamodb.QueryInput{
			TableName:                 aws.String(s.t.tokens),
			IndexName:                 aws.String(tokensByUserIndex),
			KeyConditionExpression:    aws.String("user_id = :u"),
			ExpressionAttributeValues: item{":u": sv(userID)},
		}
		for {
			out, err := s.db.Query(ctx, in)
			if err != nil {
				if isMissingIndex(err) {
					missing = true
					return nil
				}
				return err
			}
			for _, it := range out.Items {
				hashes = append(hashes, getS(it, "hash"))
			}
			if len(out.LastEvaluatedKey) == 0 {
				return nil
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	})
	if err != nil || !missing {
		return hashes, err
	}
	hashes = hashes[:0]
	err = s.scanAll(ctx, "list tokens (no index "+tokensByUserIndex+": run --create-tables)", s.t.tokens, func(it item) {
		if getS(it, "user_id") == userID {
			hashes = append(hashes, getS(it, "hash"))
		}
	})
	return hashes, err
}

// isMissingIndex says whether err is the answer to a Query on an index the
// table does not have: DynamoDB's ValidationException ("The table does not
// have the specified index"), moto's ResourceNotFoundException ("Invalid
// index").
func isMissingIndex(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	code := api.ErrorCode()
	return (code == "ValidationException" || code == "ResourceNotFoundException") &&
		strings.Contains(strings.ToLower(api.ErrorMessage()), "index")
}

// ensureIndex adds the index def (over attrs) to a table made before it
// (--create-tables on an existing deployment) and waits until it is active:
// DynamoDB backfills it from the items that have its keys.
func (s *Store) ensureIndex(ctx context.Context, table string, attrs []types.AttributeDefinition, def types.GlobalSecondaryIndex) error {
	name := aws.ToString(def.IndexName)
	for {
		desc, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("dynamo: describe %s: %w", table, err)
		}
		var found *types.GlobalSecondaryIndexDescription
		for i, g := range desc.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == name {
				found = &desc.Table.GlobalSecondaryIndexes[i]
			}
		}
		switch {
		case found == nil:
			_, err := s.db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
				TableName:            aws.String(table),
				AttributeDefinitions: attrs,
				GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
					IndexName: def.IndexName, KeySchema: def.KeySchema, Projection: def.Projection,
				}}},
			})
			if err != nil {
				return fmt.Errorf("dynamo: add index %s to %s: %w", name, table, err)
			}
		case found.IndexStatus == types.IndexStatusActive || found.IndexStatus == "":
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
