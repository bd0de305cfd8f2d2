package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
)

var _ server.BatchAppender = (*Store)(nil)

// AppendMessages stores a sender's batch of messages to one conversation in one
// transaction: every row and idempotency record, the conversation moved to the
// last, the sender's boundaries up to it (on the conversation item, or their
// row in a large group) and each receiver's pending range; the members' index
// entries follow the commit (moveIndex). A client with a window of sends in flight pays one
// round trip for the window instead of one per message, under the
// conversation's send lock.
//
// Only the common shape is written this way: a batch newer than the
// conversation, whose sender and receivers are not already past it. Anything
// else (a seq_no behind last_seq, a state only the one-message path plans for,
// a batch too big for one transaction) is refused with server.ErrSeqTaken with
// nothing stored, and the Service stores the messages one at a time.
func (s *Store) AppendMessages(ctx context.Context, msgs []server.Message, receivers []string) ([]*server.DuplicateError, error) {
	for i, m := range msgs {
		if m.ConversationID == "" || m.MessageID == "" || m.SenderID == "" || m.SeqNo < 1 || m.ConversationID != msgs[0].ConversationID || (i > 0 && m.SeqNo <= msgs[i-1].SeqNo) {
			return nil, fmt.Errorf("dynamo append batch: message %q seq %d: one conversation, ascending seq_nos, and a message id and sender each", m.MessageID, m.SeqNo)
		}
	}
	dups := make([]*server.DuplicateError, len(msgs))
	// A message_id twice in the batch: the later one is a resend of the earlier,
	// answered with it once the batch is stored (one transaction may not write
	// one item twice).
	repeatOf := make([]int, len(msgs))
	firstByID := make(map[string]int, len(msgs))
	for i, m := range msgs {
		repeatOf[i] = -1
		if j, ok := firstByID[m.MessageID]; ok {
			repeatOf[i] = j
		} else {
			firstByID[m.MessageID] = i
		}
	}
	rcv := receiversOf(msgs[0].SenderID, receivers)
	var last server.Message
	err := s.do(ctx, "append batch", func(ctx context.Context) error {
		for attempt := 1; ; attempt++ {
			var stored []int
			for i := range msgs {
				if dups[i] == nil && repeatOf[i] < 0 {
					stored = append(stored, i)
				}
			}
			if len(stored) == 0 {
				last = server.Message{}
				return nil // all resends
			}
			last = msgs[stored[len(stored)-1]]
			items := s.batchItems(msgs, stored, rcv)
			if len(items) > maxTxItems {
				return server.ErrSeqTaken // one at a time spreads the writes
			}
			txItems := make([]types.TransactWriteItem, len(items))
			for i, it := range items {
				txItems[i] = it.tx
			}
			_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txItems})
			if err == nil {
				return nil
			}
			reasons := cancelReasons(err)
			if reasons == nil {
				return err
			}
			if attempt == 10 {
				return fmt.Errorf("append batch to %s: still cancelled after %d attempts: %w", msgs[0].ConversationID, attempt, err)
			}
			retry, conflict, err := s.resolveBatch(ctx, msgs, items, reasons, dups)
			if err == errOwnWrite {
				return nil
			}
			if err != nil {
				return err
			}
			if !retry {
				return server.ErrSeqTaken
			}
			if conflict {
				if err := backoff(ctx, attempt); err != nil {
					return err
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if last.SeqNo != 0 {
		s.moveIndex(ctx, last, append([]string{last.SenderID}, rcv...))
	}
	s.boundMentionAll(ctx, msgs) // mention_trim.go
	for i, j := range repeatOf {
		if j < 0 {
			continue
		}
		if dups[j] != nil {
			dups[i] = dups[j]
		} else {
			dups[i] = &server.DuplicateError{Original: msgs[j]}
		}
	}
	return dups, nil
}

// MaxAppend is what fits in one transaction: 2 items per message, and the
// conversation, the sender's status (in a group too large to fold it into
// the conversation) and a pending row per receiver (2B + N + 1 ≤ 100).
func (s *Store) MaxAppend(members int) int { return (maxTxItems - 1 - members) / 2 }

// batchItems builds the transaction for msgs[stored...] (ascending seq_nos).
func (s *Store) batchItems(msgs []server.Message, stored []int, receivers []string) []planned {
	first, last := msgs[stored[0]], msgs[stored[len(stored)-1]]
	var items []planned
	for _, i := range stored {
		for _, p := range s.messageItems(msgs[i]) {
			p.msg = i
			items = append(items, p)
		}
	}
	set := "SET last_seq = :last, last_message_body = :b, last_message_sender = :snd, last_message_at = :t, last_message_seq = :last"
	var names map[string]string
	folded := foldSender(len(receivers) + 1)
	if folded {
		set += ", #sent = :last"
		names = map[string]string{"#sent": sentAttr(last.SenderID)}
	}
	batch := make([]server.Message, len(stored))
	for k, i := range stored {
		batch[k] = msgs[i]
	}
	mentionAll, mentioned := mentionPlan(batch)
	vals := item{":first": nv(first.SeqNo), ":last": nv(last.SeqNo), ":b": sv(last.Preview()), ":snd": sv(last.SenderID), ":t": tv(last.Timestamp)}
	set += archiveSet(last.ConversationID, first.Timestamp, vals)
	items = append(items, planned{kind: kindConversation, tx: types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(last.ConversationID)},
		UpdateExpression:          aws.String(addMentionAll(set, vals, mentionAll)),
		ConditionExpression:       aws.String("attribute_exists(conversation_id) AND last_seq < :first"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
	}}})
	if !folded {
		items = append(items, planned{kind: kindSender, user: last.SenderID, tx: types.TransactWriteItem{Update: s.senderUpdate(last, senderBoth)}})
	}
	items = append(items, s.mentionItems(last.ConversationID, mentioned)...)
	for _, r := range receivers {
		items = append(items, planned{kind: kindPending, user: r, tx: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.t.pending), Key: item{"receiver_id": sv(r), "conversation_id": sv(last.ConversationID)},
			UpdateExpression:          aws.String("SET first_undelivered_seq = if_not_exists(first_undelivered_seq, :first), last_pending_seq = :last"),
			ConditionExpression:       aws.String("attribute_not_exists(receiver_id) OR last_pending_seq < :first"),
			ExpressionAttributeValues: item{":first": nv(first.SeqNo), ":last": nv(last.SeqNo)},
		}}})
	}
	return items
}

// resolveBatch reads what a cancelled batch ran into. Resends get their
// originals in dups, and the batch is tried again (retry); conflict asks for a pause first. Whatever the
// one-message path must plan for ends the batch (retry false), as does our own
// earlier attempt having committed (errOwnWrite).
func (s *Store) resolveBatch(ctx context.Context, msgs []server.Message, items []planned, reasons []string, dups []*server.DuplicateError) (retry, conflict bool, err error) {
	retry = true
	for i, code := range reasons {
		if i >= len(items) || code == "None" || code == "" {
			continue
		}
		it := items[i]
		switch {
		case code == "TransactionConflict", code == "ThrottlingError", code == "ProvisionedThroughputExceeded":
			conflict = true
		case code != "ConditionalCheckFailed":
			return false, false, fmt.Errorf("append batch cancelled: item %d: %s", i, code)
		case it.kind == kindMessageID:
			m := msgs[it.msg]
			dup, err := s.original(ctx, m)
			if err != nil {
				return false, false, err
			}
			if dup == nil {
				conflict = true // the record expired meanwhile: try again
				continue
			}
			if ownWrite(dup.Original, m) {
				return false, false, errOwnWrite
			}
			dups[it.msg] = dup
		case it.kind == kindConversation:
			if _, err := s.getConversation(ctx, msgs[0].ConversationID, true); err != nil {
				return false, false, err // ErrNotFound included
			}
			retry = false
		default: // a seq_no taken, a sender or receiver already past the batch
			retry = false
		}
	}
	return retry, conflict, nil
}
