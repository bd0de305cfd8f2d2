package dynamo

import (
	"context"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
)

// The media_uploads table holds one item per upload (media_id "media/...")
// and one usage item per uploader (media_id "usage/<user>"), so a
// reservation writes both in one transaction. An upload not sent carries
// unsent_shard, which puts it in the sparse unsent index; linking it to a
// message removes the attribute, and so the index entry. The index's
// partition key is one of unsentShards values, so the sweep reads a few
// partitions of unsent uploads, never the table, and no one partition takes
// every upload's write.
const unsentShards = 4

func usageKey(user string) string { return "usage/" + user }

func unsentShard(mediaID string) string {
	h := fnv.New32a()
	h.Write([]byte(mediaID))
	return strconv.Itoa(int(h.Sum32() % unsentShards))
}

// Upload states, as on the SQLite store.
const (
	stateUnsent   = "unsent"
	stateSent     = "sent"
	stateExpiring = "expiring"
)

// LinkMedia marks the upload sent, with its carrier, and writes the link in
// one transaction (2 × 2 WCU). When its condition fails a GetItem says why:
// another message carries the upload (then it is marked shared and linked:
// one UpdateItem, one PutItem), it is expiring (ErrNotFound), or there is no
// record, and media linked before may be linked again (one Query and one
// PutItem) or it is ErrNotFound.
func (s *Store) LinkMedia(ctx context.Context, mediaID, convID, messageID string) error {
	carrier := convID + "/" + messageID
	link := &dynamodb.PutItemInput{TableName: aws.String(s.t.media),
		Item: item{"media_id": sv(mediaID), "conversation_id": sv(convID)}}
	return s.do(ctx, "link media", func(ctx context.Context) error {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(mediaID)},
				UpdateExpression:          aws.String("SET #s = :sent, carrier = :c REMOVE unsent_shard"),
				ConditionExpression:       aws.String("attribute_exists(media_id) AND #s <> :expiring AND (attribute_not_exists(carrier) OR carrier = :c)"),
				ExpressionAttributeNames:  map[string]string{"#s": "state"},
				ExpressionAttributeValues: item{":sent": sv(stateSent), ":expiring": sv(stateExpiring), ":c": sv(carrier)}}},
			{Put: &types.Put{TableName: link.TableName, Item: link.Item}},
		}})
		reasons := cancelReasons(err)
		if reasons == nil || reasons[0] != "ConditionalCheckFailed" {
			return err
		}
		up, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.uploads),
			Key: item{"media_id": sv(mediaID)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if up.Item != nil {
			if getS(up.Item, "state") == stateExpiring {
				return server.ErrNotFound
			}
			// A second carrier: the upload is kept when either is deleted.
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(mediaID)},
				UpdateExpression:          aws.String("SET #s = :sent, #sh = :t REMOVE unsent_shard"),
				ConditionExpression:       aws.String("attribute_exists(media_id) AND #s <> :expiring"),
				ExpressionAttributeNames:  map[string]string{"#s": "state", "#sh": "shared"},
				ExpressionAttributeValues: item{":sent": sv(stateSent), ":expiring": sv(stateExpiring), ":t": bv(true)}})
			if isCondFailed(err) {
				return server.ErrNotFound // expiring meanwhile
			}
			if err != nil {
				return err
			}
			_, err = s.db.PutItem(ctx, link)
			return err
		}
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(s.t.media), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("media_id = :m"),
			ExpressionAttributeValues: item{":m": sv(mediaID)}, Limit: aws.Int32(1)})
		if err != nil {
			return err
		}
		if len(out.Items) == 0 {
			return server.ErrNotFound
		}
		_, err = s.db.PutItem(ctx, link)
		return err
	})
}

// ReleaseMedia is one conditional UpdateItem that marks the upload expiring
// and puts it back in the unsent index (so the sweep finishes a release cut
// short); on its condition's failure a GetItem says why.
func (s *Store) ReleaseMedia(ctx context.Context, mediaID, convID, messageID string) (server.MediaUpload, error) {
	var up server.MediaUpload
	err := s.do(ctx, "release media", func(ctx context.Context) error {
		key := item{"media_id": sv(mediaID)}
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: key,
			UpdateExpression:          aws.String("SET #s = :expiring, unsent_shard = :shard"),
			ConditionExpression:       aws.String("#s = :sent AND carrier = :c AND attribute_not_exists(#sh)"),
			ExpressionAttributeNames:  map[string]string{"#s": "state", "#sh": "shared"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":expiring": sv(stateExpiring), ":c": sv(convID + "/" + messageID), ":shard": sv(unsentShard(mediaID))},
			ReturnValues:              types.ReturnValueAllNew})
		it := item(nil)
		switch {
		case err == nil:
			it = out.Attributes
		case !isCondFailed(err):
			return err
		default:
			got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.uploads), Key: key, ConsistentRead: aws.Bool(true)})
			switch {
			case err != nil:
				return err
			case got.Item == nil:
				return server.ErrNotFound
			case getS(got.Item, "state") != stateExpiring:
				return server.ErrNotApplied
			}
			it = got.Item
		}
		up = server.MediaUpload{MediaID: mediaID, Owner: getS(it, "owner"), Size: getN(it, "size"), CreatedAt: getT(it, "created_at")}
		return nil
	})
	return up, err
}

// MediaConversations is one Query on the media_id key.
func (s *Store) MediaConversations(ctx context.Context, mediaID string) ([]string, error) {
	var out []string
	err := s.do(ctx, "media conversations", func(ctx context.Context) error {
		out = out[:0]
		return s.queryEach(ctx, &dynamodb.QueryInput{TableName: aws.String(s.t.media), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("media_id = :m"),
			ExpressionAttributeValues: item{":m": sv(mediaID)}}, func(it item) bool {
			out = append(out, getS(it, "conversation_id"))
			return true
		})
	})
	return out, err
}

// MediaUsage is one strongly consistent GetItem.
func (s *Store) MediaUsage(ctx context.Context, userID string) (server.MediaUsage, error) {
	var u server.MediaUsage
	err := s.do(ctx, "media usage", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.uploads),
			Key: item{"media_id": sv(usageKey(userID))}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		u = server.MediaUsage{Bytes: getN(out.Item, "bytes"), Uploads: getN(out.Item, "uploads"),
			RateAt: getT(out.Item, "rate_at"), Version: getN(out.Item, "version")}
		return nil
	})
	return u, err
}

// ReserveMedia is one transaction of two puts (2 × 2 WCU): the upload, and
// the usage on the condition of its version.
func (s *Store) ReserveMedia(ctx context.Context, up server.MediaUpload, was, next server.MediaUsage) error {
	return s.do(ctx, "reserve media", func(ctx context.Context) error {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(s.t.uploads), Item: item{"media_id": sv(up.MediaID), "owner": sv(up.Owner),
				"size": nv(up.Size), "created_at": tv(up.CreatedAt), "state": sv(stateUnsent), "unsent_shard": sv(unsentShard(up.MediaID))},
				ConditionExpression: aws.String("attribute_not_exists(media_id)")}},
			{Put: &types.Put{TableName: aws.String(s.t.uploads), Item: item{"media_id": sv(usageKey(up.Owner)),
				"bytes": nv(next.Bytes), "uploads": nv(next.Uploads), "rate_at": tv(next.RateAt), "version": nv(next.Version)},
				ConditionExpression:       aws.String("attribute_not_exists(media_id) OR version = :v"),
				ExpressionAttributeValues: item{":v": nv(was.Version)}}},
		}})
		reasons := cancelReasons(err)
		switch {
		case reasons == nil:
			return err
		case reasons[0] == "ConditionalCheckFailed":
			return server.ErrExists
		case len(reasons) > 1 && reasons[1] == "ConditionalCheckFailed", slices.Contains(reasons, "TransactionConflict"):
			return server.ErrRaced
		}
		return err
	})
}

// UnsentMedia queries each shard of the unsent index for created_at <
// before (eventually consistent: an upload sent a moment ago may still be
// listed, and ExpireMedia's condition leaves it).
func (s *Store) UnsentMedia(ctx context.Context, before time.Time, limit int) ([]server.MediaUpload, error) {
	var out []server.MediaUpload
	err := s.do(ctx, "unsent media", func(ctx context.Context) error {
		out = out[:0]
		for shard := range unsentShards {
			n := 0
			err := s.queryEach(ctx, &dynamodb.QueryInput{TableName: aws.String(s.t.uploads), IndexName: aws.String(unsentIndex),
				KeyConditionExpression:    aws.String("unsent_shard = :s AND created_at < :t"),
				ExpressionAttributeValues: item{":s": sv(strconv.Itoa(shard)), ":t": tv(before)},
				Limit:                     aws.Int32(int32(limit))}, func(it item) bool {
				out = append(out, server.MediaUpload{MediaID: getS(it, "media_id"), Owner: getS(it, "owner"),
					Size: getN(it, "size"), CreatedAt: getT(it, "created_at")})
				n++
				return n < limit
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b server.MediaUpload) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out[:min(len(out), limit)], err
}

// ExpireMedia is one conditional UpdateItem; on its condition's failure, a
// GetItem tells a sent upload from a missing one.
func (s *Store) ExpireMedia(ctx context.Context, mediaID string) error {
	return s.do(ctx, "expire media", func(ctx context.Context) error {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(mediaID)},
			UpdateExpression:          aws.String("SET #s = :expiring"),
			ConditionExpression:       aws.String("attribute_exists(media_id) AND #s <> :sent"),
			ExpressionAttributeNames:  map[string]string{"#s": "state"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":expiring": sv(stateExpiring)}})
		if !isCondFailed(err) {
			return err
		}
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.uploads),
			Key: item{"media_id": sv(mediaID)}, ConsistentRead: aws.Bool(true)})
		switch {
		case err != nil:
			return err
		case out.Item == nil:
			return server.ErrNotFound
		}
		return server.ErrNotApplied
	})
}

// DropMedia queries the upload's links and deletes them (none for an upload
// never sent, the sweep's usual case: one Query), then is one transaction
// (2 × 2 WCU): the delete of the expiring upload, and the usage's decrement.
func (s *Store) DropMedia(ctx context.Context, up server.MediaUpload) error {
	return s.do(ctx, "drop media", func(ctx context.Context) error {
		var convs []string
		err := s.queryEach(ctx, &dynamodb.QueryInput{TableName: aws.String(s.t.media), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("media_id = :m"),
			ExpressionAttributeValues: item{":m": sv(up.MediaID)}}, func(it item) bool {
			convs = append(convs, getS(it, "conversation_id"))
			return true
		})
		if err != nil {
			return err
		}
		for _, c := range convs {
			// Only while the upload is expiring: a record of another state is
			// not this call's to drop (its condition below would refuse it too).
			_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(up.MediaID)},
					ConditionExpression:       aws.String("#s = :expiring"),
					ExpressionAttributeNames:  map[string]string{"#s": "state"},
					ExpressionAttributeValues: item{":expiring": sv(stateExpiring)}}},
				{Delete: &types.Delete{TableName: aws.String(s.t.media), Key: item{"media_id": sv(up.MediaID), "conversation_id": sv(c)}}},
			}})
			if r := cancelReasons(err); r != nil && r[0] == "ConditionalCheckFailed" {
				return nil
			}
			if err != nil {
				return err
			}
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Delete: &types.Delete{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(up.MediaID)},
				ConditionExpression:       aws.String("#s = :expiring"),
				ExpressionAttributeNames:  map[string]string{"#s": "state"},
				ExpressionAttributeValues: item{":expiring": sv(stateExpiring)}}},
			{Update: &types.Update{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(usageKey(up.Owner))},
				UpdateExpression:          aws.String("ADD bytes :b, uploads :n, version :one"),
				ExpressionAttributeValues: item{":b": nv(-up.Size), ":n": nv(-1), ":one": nv(1)}}},
		}})
		if r := cancelReasons(err); r != nil && r[0] == "ConditionalCheckFailed" {
			return nil // dropped already
		}
		return err
	})
}
