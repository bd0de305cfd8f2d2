package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// unchanged is the condition that a message item is still at updatedSeq (the
// seq_no of the last event applied to it; none yet is no attribute).
func unchanged(updatedSeq int64) (string, item) {
	if updatedSeq == 0 {
		return "attribute_not_exists(updated_seq)", item{}
	}
	return "updated_seq = :base", item{":base": nv(updatedSeq)}
}

// targetUpdate is the write that applies event m to its target, part of m's
// transaction: conditioned on the target being a message, not deleted, at
// m.BaseSeq and, for an edit or delete, at m.BaseRef (else the transaction is cancelled and AppendMessage answers
// ErrTargetChanged). A reaction reads the target first: a nested map path
// cannot be set when the map does not exist yet, so the whole map is
// written, and the condition keeps that read current.
func (s *Store) targetUpdate(ctx context.Context, m server.Message) (*types.Update, error) {
	key := item{"conversation_id": sv(m.ConversationID), "seq_no": nv(m.TargetSeq)}
	cond, vals := unchanged(m.BaseSeq)
	cond = "attribute_exists(seq_no) AND attribute_not_exists(kind) AND attribute_not_exists(deleted) AND " + cond
	vals[":seq"] = nv(m.SeqNo)
	var expr string
	switch m.Kind {
	case wire.KindReaction:
		var reactions map[string]string
		err := s.do(ctx, "read reaction target", func(ctx context.Context) error {
			it, _, err := s.getItem(ctx, s.t.messages, key)
			reactions = getStringMap(it, "reactions")
			return err
		})
		if err != nil {
			return nil, err
		}
		if m.Content == "" {
			delete(reactions, m.SenderID)
		} else {
			if reactions == nil {
				reactions = map[string]string{}
			}
			reactions[m.SenderID] = m.Content
		}
		if len(reactions) == 0 {
			expr = "SET updated_seq = :seq REMOVE reactions"
		} else {
			expr = "SET updated_seq = :seq, reactions = :r"
			vals[":r"] = stringMap(reactions)
		}
	case wire.KindEdit:
		// edit_seqs lets a later delete find the edits whose text it clears.
		expr = "SET content = :c, edited = :t, updated_seq = :seq ADD edit_seqs :e REMOVE s3_ref"
		vals[":c"], vals[":t"], vals[":e"] = sv(m.Content), bv(true), &types.AttributeValueMemberNS{Value: []string{strconv.FormatInt(m.SeqNo, 10)}}
	case wire.KindDelete:
		expr = "SET deleted = :t, updated_seq = :seq REMOVE content, attachment, attachment_info, s3_ref, reactions"
		vals[":t"] = bv(true)
	default:
		return nil, fmt.Errorf("dynamo append: unknown event kind %q", m.Kind)
	}
	if m.Kind != wire.KindReaction {
		// The archiver must not have moved the target since the Service
		// looked (server.Message.BaseRef).
		if m.BaseRef == "" {
			cond += " AND attribute_not_exists(s3_ref)"
		} else {
			cond += " AND s3_ref = :ref"
			vals[":ref"] = sv(m.BaseRef)
		}
	}
	return &types.Update{TableName: aws.String(s.t.messages), Key: key, UpdateExpression: aws.String(expr),
		ConditionExpression: aws.String(cond), ExpressionAttributeValues: vals}, nil
}

// finishEvent does what follows an edit or delete once it has committed:
// the preview, if it shows the target, and for a delete the text of the
// target's earlier edits. Both writes are idempotent; a pass that fails is
// retried in the background until it works or the store closes.
func (s *Store) finishEvent(ctx context.Context, m server.Message) {
	if m.Kind != wire.KindEdit && m.Kind != wire.KindDelete {
		return
	}
	s.untilDone(ctx, m, "the preview and the text of earlier edits", func(ctx context.Context) error { return s.applyEventLater(ctx, m) })
}

func (s *Store) applyEventLater(ctx context.Context, m server.Message) error {
	return s.do(ctx, "finish event", func(ctx context.Context) error {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(m.ConversationID)},
			UpdateExpression:          aws.String("SET last_message_body = :b"),
			ConditionExpression:       aws.String("last_message_seq = :target"),
			ExpressionAttributeValues: item{":b": sv(m.Preview()), ":target": nv(m.TargetSeq)},
		})
		if err != nil && !isCondFailed(err) { // another message is the preview now
			return err
		}
		if m.Kind != wire.KindDelete {
			return nil
		}
		target, _, err := s.getItem(ctx, s.t.messages, item{"conversation_id": sv(m.ConversationID), "seq_no": nv(m.TargetSeq)})
		if err != nil {
			return err
		}
		edits, _ := target["edit_seqs"].(*types.AttributeValueMemberNS)
		if edits == nil {
			return nil
		}
		for _, seq := range edits.Value {
			n, _ := strconv.ParseInt(seq, 10, 64)
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(s.t.messages), Key: item{"conversation_id": sv(m.ConversationID), "seq_no": nv(n)},
				UpdateExpression:    aws.String("REMOVE content, s3_ref"), // the Service removed the blob first
				ConditionExpression: aws.String("attribute_exists(seq_no)"),
			})
			if err != nil && !isCondFailed(err) {
				return err
			}
		}
		return nil
	})
}

// getAttachmentInfo reads the JSON an attachment's description is kept as;
// one that does not decode (it never should) reads as none.
func getAttachmentInfo(it item) *wire.AttachmentInfo {
	s := getS(it, "attachment_info")
	if s == "" {
		return nil
	}
	var a wire.AttachmentInfo
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil
	}
	return &a
}

func getStringMap(it item, name string) map[string]string {
	v, ok := it[name].(*types.AttributeValueMemberM)
	if !ok || len(v.Value) == 0 {
		return nil
	}
	out := make(map[string]string, len(v.Value))
	for k, e := range v.Value {
		if sv, ok := e.(*types.AttributeValueMemberS); ok {
			out[k] = sv.Value
		}
	}
	return out
}

func stringMap(m map[string]string) types.AttributeValue {
	v := make(map[string]types.AttributeValue, len(m))
	for k, e := range m {
		v[k] = sv(e)
	}
	return &types.AttributeValueMemberM{Value: v}
}
