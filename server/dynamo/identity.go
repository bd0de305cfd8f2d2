package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/chatterm/chat/server"
)

// The store's identity (server.IdentityStore) is the users-table item
// "#store": store_id, and schema, the SchemaVersion of the build that made
// it. A point-in-time restore copies it with the rest, so the operator
// rotates it afterwards (chatserver rotate-store-id, docs/self-hosting.md).

func (s *Store) StoreID(ctx context.Context) (string, error) {
	for {
		it, err := s.storeItem(ctx)
		if err != nil {
			return "", err
		}
		if it != nil {
			if v := getN(it, "schema"); v > SchemaVersion {
				return "", fmt.Errorf("%w: the tables are at dynamodb schema %d, this chatserver knows up to %d (chatserver --version); run a chatserver of the newer version",
					server.ErrNewerSchema, v, SchemaVersion)
			}
			return getS(it, "store_id"), nil
		}
		// Tables from before store ids, or new ones: the first node to get
		// here makes the id; the others read it on their next turn.
		err = s.do(ctx, "make the store id", func(ctx context.Context) error {
			_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
				TableName:           aws.String(s.t.users),
				Item:                item{"user_id": sv(storeKey), "store_id": sv(newStoreID()), "schema": nv(SchemaVersion)},
				ConditionExpression: aws.String("attribute_not_exists(user_id)"),
			})
			return err
		})
		if err != nil && !isCondFailed(err) {
			return "", err
		}
	}
}

func (s *Store) RotateStoreID(ctx context.Context) (string, error) {
	if _, err := s.StoreID(ctx); err != nil { // refuses tables of a newer schema
		return "", err
	}
	id := newStoreID()
	err := s.do(ctx, "rotate the store id", func(ctx context.Context) error {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.t.users),
			Key:                       item{"user_id": sv(storeKey)},
			UpdateExpression:          aws.String("SET store_id = :id"),
			ExpressionAttributeValues: item{":id": sv(id)},
		})
		return err
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

func (s *Store) storeItem(ctx context.Context) (item, error) {
	var it item
	err := s.do(ctx, "read the store id", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.users), Key: item{"user_id": sv(storeKey)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		it = out.Item
		return nil
	})
	return it, err
}

func newStoreID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
