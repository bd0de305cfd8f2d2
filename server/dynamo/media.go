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

// An upload's carriers, the messages that send it, are the string set
// carriers ("<conversation_id>/<message_id>"); links counts the links made.
// Items written before the set hold their first carrier in carrier (S) and,
// when another message sent them too, shared (BOOL): such an upload is
// released once carrier's message is deleted only if it was not shared (the
// other carriers were never recorded: it is kept for good, as before).

func carrierSet(convID, messageID string) types.AttributeValue {
	return &types.AttributeValueMemberSS{Value: []string{convID + "/" + messageID}}
}

// LinkMedia marks the upload sent and adds the carrier (UpdateItem, 1 WCU;
// ADD on a set is idempotent, so a resend adds nothing but the count), then
// writes the link (PutItem, 1 WCU). A link that fails after the update
// returns the count with its error, so the failed send unlinks it. When the
// update's condition fails a GetItem says why: it is expiring (ErrNotFound),
// or there is no record, and media linked before may be linked again (one
// Query and the PutItem) or it is ErrNotFound.
func (s *Store) LinkMedia(ctx context.Context, mediaID, convID, messageID string) (int64, error) {
	var links int64
	link := &dynamodb.PutItemInput{TableName: aws.String(s.t.media),
		Item: item{"media_id": sv(mediaID), "conversation_id": sv(convID)}}
	err := s.do(ctx, "link media", func(ctx context.Context) error {
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: item{"media_id": sv(mediaID)},
			UpdateExpression:          aws.String("SET #s = :sent REMOVE unsent_shard ADD carriers :c, links :one"),
			ConditionExpression:       aws.String("attribute_exists(media_id) AND #s <> :expiring"),
			ExpressionAttributeNames:  map[string]string{"#s": "state"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":expiring": sv(stateExpiring), ":c": carrierSet(convID, messageID), ":one": nv(1)},
			ReturnValues:              types.ReturnValueUpdatedNew})
		if err == nil {
			links = getN(out.Attributes, "links")
			_, err = s.db.PutItem(ctx, link)
			return err
		}
		if !isCondFailed(err) {
			return err
		}
		up, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.uploads),
			Key: item{"media_id": sv(mediaID)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if up.Item != nil {
			return server.ErrNotFound // expiring
		}
		q, err := s.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(s.t.media), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("media_id = :m"),
			ExpressionAttributeValues: item{":m": sv(mediaID)}, Limit: aws.Int32(1)})
		if err != nil {
			return err
		}
		if len(q.Items) == 0 {
			return server.ErrNotFound
		}
		_, err = s.db.PutItem(ctx, link)
		return err
	})
	return links, err
}

// UnlinkMedia is one conditional UpdateItem that takes the carrier out while
// the link count is still links; when the set is then empty (DynamoDB drops
// an empty set), a second one puts the upload back in the unsent index,
// from at, if still no carrier and no link since.
func (s *Store) UnlinkMedia(ctx context.Context, mediaID, convID, messageID string, links int64, at time.Time) error {
	return s.do(ctx, "unlink media", func(ctx context.Context) error {
		key := item{"media_id": sv(mediaID)}
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: key,
			UpdateExpression:          aws.String("DELETE carriers :c"),
			ConditionExpression:       aws.String("#s = :sent AND links = :n"),
			ExpressionAttributeNames:  map[string]string{"#s": "state"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":n": nv(links), ":c": carrierSet(convID, messageID)},
			ReturnValues:              types.ReturnValueAllNew})
		if isCondFailed(err) {
			return server.ErrNotApplied
		}
		if err != nil {
			return err
		}
		if it := out.Attributes; it["carriers"] != nil || it["carrier"] != nil || it["shared"] != nil {
			return nil // another message carries it
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: key,
			UpdateExpression:          aws.String("SET #s = :unsent, created_at = :at, unsent_shard = :shard"),
			ConditionExpression:       aws.String("#s = :sent AND links = :n AND attribute_not_exists(carriers)"),
			ExpressionAttributeNames:  map[string]string{"#s": "state"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":unsent": sv(stateUnsent), ":n": nv(links), ":at": tv(at), ":shard": sv(unsentShard(mediaID))}})
		if isCondFailed(err) {
			return nil // linked again meanwhile: it stays sent
		}
		return err
	})
}

// ReleaseMedia takes the carrier out (one UpdateItem, and a second for an
// item of before the set whose carrier it is), then marks the upload
// expiring and puts it back in the unsent index (so the sweep finishes a
// release cut short) if no carrier is left: one conditional UpdateItem, on
// whose condition's failure a GetItem says why.
func (s *Store) ReleaseMedia(ctx context.Context, mediaID, convID, messageID string) (server.MediaUpload, error) {
	var up server.MediaUpload
	err := s.do(ctx, "release media", func(ctx context.Context) error {
		key := item{"media_id": sv(mediaID)}
		carrier := convID + "/" + messageID
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: key,
			UpdateExpression:          aws.String("DELETE carriers :c"),
			ConditionExpression:       aws.String("#s = :sent"),
			ExpressionAttributeNames:  map[string]string{"#s": "state"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":c": carrierSet(convID, messageID)},
			ReturnValues:              types.ReturnValueAllNew})
		if err != nil && !isCondFailed(err) {
			return err
		}
		if err == nil && getS(out.Attributes, "carrier") == carrier {
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: key,
				UpdateExpression:          aws.String("REMOVE carrier"),
				ConditionExpression:       aws.String("carrier = :c"),
				ExpressionAttributeValues: item{":c": sv(carrier)}})
			if err != nil && !isCondFailed(err) {
				return err
			}
		}
		upd, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.uploads), Key: key,
			UpdateExpression:          aws.String("SET #s = :expiring, unsent_shard = :shard"),
			ConditionExpression:       aws.String("#s = :sent AND attribute_not_exists(carriers) AND attribute_not_exists(carrier) AND attribute_not_exists(#sh)"),
			ExpressionAttributeNames:  map[string]string{"#s": "state", "#sh": "shared"},
			ExpressionAttributeValues: item{":sent": sv(stateSent), ":expiring": sv(stateExpiring), ":shard": sv(unsentShard(mediaID))},
			ReturnValues:              types.ReturnValueAllNew})
		it := item(nil)
		switch {
		case err == nil:
			it = upd.Attributes
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
