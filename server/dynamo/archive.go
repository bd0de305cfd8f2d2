package dynamo

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
)

var _ server.ColdStore = (*Store)(nil)

// archiveIndex is the conversations table's sparse GSI of the conversations
// with rows after their watermark: (archive_shard, archive_at), projecting
// archived_through. A send sets archive_at only if it is missing
// (if_not_exists: the time of the first row after the watermark), so a
// conversation enters the index once per time it is archived through, not
// once per message; the archiver moves archive_at to the next row's time and
// removes it once the conversation is archived through its last row.
const archiveIndex = "archive_due"

// archiveShards spreads the index over partition keys, so a burst of
// conversations coming back to life does not land its index writes on one
// partition (as for media_uploads' unsent).
const archiveShards = 4

// archiveShard is convID's partition of archiveIndex: fixed by its id, so
// the send path sets it to the value it has (no index write).
func archiveShard(convID string) string {
	h := fnv.New32a()
	h.Write([]byte(convID))
	return strconv.Itoa(int(h.Sum32() % archiveShards))
}

// archiveSet is the send path's addition to the conversation item's update
// (the message's transaction; no write of its own): it keeps the
// conversation in archiveIndex from its first row after the watermark on.
func archiveSet(convID string, ts time.Time, vals item) string {
	vals[":ash"], vals[":aat"] = sv(archiveShard(convID)), tv(ts)
	return ", archive_shard = :ash, archive_at = if_not_exists(archive_at, :aat)"
}

// ArchiveDue queries each shard of archiveIndex for entries before cutoff
// (eventually consistent: an entry a moment behind costs the archiver a
// row read again, nothing more) and merges them, oldest first.
func (s *Store) ArchiveDue(ctx context.Context, cutoff time.Time, limit int) ([]server.ArchiveDue, error) {
	if limit < 1 {
		return nil, nil
	}
	if err := s.seedArchive(ctx); err != nil {
		return nil, err
	}
	type entry struct {
		d  server.ArchiveDue
		at int64
	}
	var all []entry
	for shard := range archiveShards {
		err := s.do(ctx, "archive due", func(ctx context.Context) error {
			in := &dynamodb.QueryInput{
				TableName:                 aws.String(s.t.conversations),
				IndexName:                 aws.String(archiveIndex),
				KeyConditionExpression:    aws.String("archive_shard = :s AND archive_at < :cutoff"),
				ExpressionAttributeValues: item{":s": sv(strconv.Itoa(shard)), ":cutoff": tv(cutoff)},
				Limit:                     aws.Int32(int32(limit)),
			}
			out, err := s.db.Query(ctx, in)
			if err != nil {
				return err
			}
			for _, it := range out.Items {
				all = append(all, entry{server.ArchiveDue{ConversationID: getS(it, "conversation_id"), ArchivedThrough: getN(it, "archived_through")}, getN(it, "archive_at")})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(all, func(a, b entry) int {
		if a.at != b.at {
			return int(min(max(a.at-b.at, -1), 1))
		}
		return strings.Compare(a.d.ConversationID, b.d.ConversationID)
	})
	out := make([]server.ArchiveDue, 0, min(len(all), limit))
	for _, e := range all[:min(len(all), limit)] {
		out = append(out, e.d)
	}
	return out, nil
}

// AdvanceArchive is one UpdateItem. Archived through its last row, the
// conversation leaves the index (REMOVE archive_at) only if last_seq is still
// that row: a send in between keeps it in, at the time it had, so the next
// visit finds the new row. The watermark never moves down (two archivers at
// once: the one behind changes nothing).
func (s *Store) AdvanceArchive(ctx context.Context, convID string, through int64, next time.Time) error {
	key := item{"conversation_id": sv(convID)}
	notBehind := "attribute_exists(conversation_id) AND (attribute_not_exists(archived_through) OR archived_through <= :t)"
	return s.do(ctx, "advance archive", func(ctx context.Context) error {
		if next.IsZero() {
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(s.t.conversations), Key: key,
				UpdateExpression:          aws.String("SET archived_through = :t REMOVE archive_at"),
				ConditionExpression:       aws.String(notBehind + " AND last_seq = :t"),
				ExpressionAttributeValues: item{":t": nv(through)},
			})
			if !isCondFailed(err) {
				return err
			}
		}
		expr, vals := "SET archived_through = :t", item{":t": nv(through)}
		if !next.IsZero() {
			expr += ", archive_at = :n"
			vals[":n"] = tv(next)
		}
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.t.conversations), Key: key,
			UpdateExpression:          aws.String(expr),
			ConditionExpression:       aws.String(notBehind),
			ExpressionAttributeValues: vals,
		})
		if !isCondFailed(err) {
			return err
		}
		// Another archiver is further on, or there is no such conversation.
		_, found, err := s.getItem(ctx, s.t.conversations, key)
		if err == nil && !found {
			return server.ErrNotFound
		}
		return err
	})
}

// MarkArchived removes the content and records the blob key; the row keeps
// its key, sender, timestamp and ids. Only if it is still as listed.
func (s *Store) MarkArchived(ctx context.Context, m server.Message, ref string) error {
	return s.do(ctx, "mark archived", func(ctx context.Context) error {
		cond, vals := unchanged(m.UpdatedSeq)
		vals[":r"] = sv(ref)
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.t.messages),
			Key:                       item{"conversation_id": sv(m.ConversationID), "seq_no": nv(m.SeqNo)},
			UpdateExpression:          aws.String("SET s3_ref = :r REMOVE content"),
			ConditionExpression:       aws.String("attribute_exists(seq_no) AND attribute_exists(content) AND attribute_not_exists(deleted) AND " + cond),
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

// EditSeqs reads the target's edit_seqs (kept for a delete to clear the
// edits' text): a GetItem, on the delete of an edited message only.
func (s *Store) EditSeqs(ctx context.Context, convID string, targetSeq int64) ([]int64, error) {
	var out []int64
	err := s.do(ctx, "edit seqs", func(ctx context.Context) error {
		out = out[:0]
		target, _, err := s.getItem(ctx, s.t.messages, item{"conversation_id": sv(convID), "seq_no": nv(targetSeq)})
		if err != nil {
			return err
		}
		edits, _ := target["edit_seqs"].(*types.AttributeValueMemberNS)
		if edits == nil {
			return nil
		}
		for _, v := range edits.Value {
			seq, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("edit_seqs of %s/%d: %w", convID, targetSeq, err)
			}
			out = append(out, seq)
		}
		slices.Sort(out)
		return nil
	})
	return out, err
}

// archiveSeeded marks, in the users table, that every conversation with rows
// made before the archive index existed has been put in it (seedArchive).
var archiveSeeded = item{"user_id": sv("#archive#seeded")}

// seedArchive puts the conversations of a deployment older than
// archiveIndex in it, once: a Scan of the conversations table (not the
// messages table) for items without archive_shard, and an UpdateItem for
// each, at archive_at 0 (looked at in the first pass). A node that stops
// half way leaves the marker unwritten, and the next pass scans again;
// the update's condition keeps it from touching a conversation a send has
// put in the index meanwhile.
func (s *Store) seedArchive(ctx context.Context) error {
	if s.archiveSeeded.Load() {
		return nil
	}
	return s.do(ctx, "seed archive index", func(ctx context.Context) error {
		_, found, err := s.getItem(ctx, s.t.users, archiveSeeded)
		if err != nil {
			return err
		}
		if !found {
			var start item
			for {
				page, err := s.db.Scan(ctx, &dynamodb.ScanInput{
					TableName:                 aws.String(s.t.conversations),
					ProjectionExpression:      aws.String("conversation_id"),
					FilterExpression:          aws.String("attribute_not_exists(archive_shard) AND last_seq > :zero"),
					ExpressionAttributeValues: item{":zero": nv(0)},
					ExclusiveStartKey:         start,
				})
				if err != nil {
					return err
				}
				for _, it := range page.Items {
					id := getS(it, "conversation_id")
					_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
						TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(id)},
						UpdateExpression:          aws.String("SET archive_shard = :s, archive_at = :zero"),
						ConditionExpression:       aws.String("attribute_exists(conversation_id) AND attribute_not_exists(archive_shard)"),
						ExpressionAttributeValues: item{":s": sv(archiveShard(id)), ":zero": nv(0)},
					})
					if err != nil && !isCondFailed(err) {
						return err
					}
				}
				if start = page.LastEvaluatedKey; len(start) == 0 {
					break
				}
			}
			if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.t.users), Item: archiveSeeded}); err != nil {
				return err
			}
		}
		s.archiveSeeded.Store(true)
		return nil
	})
}
