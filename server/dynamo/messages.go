package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// The send transaction (docs/architecture.md, "A send"). DynamoDB has no MAX in update
// expressions, and inside a transaction a failed condition cancels everything,
// so each "move forward" write is first tried in the shape of the common case
// (this message is the newest), guarded by a condition saying so. If the
// transaction is cancelled, the cancellation reasons say which items' conditions
// failed; those are re-read and rewritten in the shape their current state
// needs, and the transaction is retried. Out-of-order commits are rare (two
// sends in one conversation finishing in the opposite order), so the common
// case is one round trip.

type senderPlan int

const (
	senderBoth     senderPlan = iota // delivered and read up to seq
	senderReadOnly                   // delivered already past seq: read up to seq
	senderNone                       // both already past seq
)

type pendingPlan int

const (
	pendingNewest pendingPlan = iota // first kept (or seq), last = seq
	pendingLower                     // last already past seq, first above it: first = seq
	pendingNone                      // seq already inside the pending range
)

type appendPlan struct {
	newest  bool // the conversation's last_seq and preview move to m
	sender  senderPlan
	pending map[string]pendingPlan
	// folded: the sender's boundaries move on the conversation item (its
	// sent_<user>) instead of the sender's message_status row: one item
	// fewer in the transaction (see sentAttr).
	folded bool
}

type itemKind int

const (
	kindMessage itemKind = iota
	kindMessageID
	kindConversation
	kindSender
	kindPending
	kindActivity   // an index entry, written after the commit (moveIndex)
	kindTarget     // an event's target message
	kindMembership // a participant (or the channel directory) a membership event changes
)

type planned struct {
	kind itemKind
	user string
	msg  int // in a batch: the message a row or idempotency record belongs to
	tx   types.TransactWriteItem
}

func (s *Store) AppendMessage(ctx context.Context, m server.Message, receivers []string) error {
	if m.ConversationID == "" || m.MessageID == "" || m.SenderID == "" || m.SeqNo < 1 {
		return fmt.Errorf("dynamo append: message %q seq %d of %q: missing conversation, message id, sender or seq", m.MessageID, m.SeqNo, m.SenderID)
	}
	rcv := receiversOf(m.SenderID, receivers)
	plan := appendPlan{newest: true, sender: senderBoth, pending: make(map[string]pendingPlan, len(rcv))}
	for _, r := range rcv {
		plan.pending[r] = pendingNewest
	}
	plan.folded = foldSender(len(rcv) + 1)
	var target *types.Update
	var membership []planned
	if wire.IsMembershipKind(m.Kind) {
		// The sender's boundaries stay (they may have just left); the change
		// goes in the same transaction (channels_dynamo.go).
		plan.sender, plan.folded = senderNone, false
		var err error
		if membership, err = s.membershipItems(ctx, m); err != nil {
			if !isDomainErr(err) {
				err = fmt.Errorf("%w: %w", server.ErrNotApplied, err)
			}
			return err
		}
	} else if m.IsEvent() {
		var err error
		if target, err = s.targetUpdate(ctx, m); err != nil {
			if !isDomainErr(err) && !errors.Is(err, server.ErrTargetChanged) {
				// A read before the transaction: nothing of m was written.
				err = fmt.Errorf("%w: %w", server.ErrNotApplied, err)
			}
			return err
		}
	}
	var later []planned
	err := s.do(ctx, "append message", func(ctx context.Context) error {
		for attempt := 1; ; attempt++ {
			var items []planned
			items, later = s.appendItems(m, plan, len(membership))
			items = append(items, membership...)
			if target != nil {
				items = append(items, planned{kind: kindTarget, tx: types.TransactWriteItem{Update: target}})
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
				return fmt.Errorf("append %s seq %d: still cancelled after %d attempts: %w", m.ConversationID, m.SeqNo, attempt, err)
			}
			conflict, err := s.resolve(ctx, m, items, reasons, &plan)
			if err == errOwnWrite {
				return nil
			}
			if err != nil {
				return err
			}
			if conflict {
				if err := backoff(ctx, attempt); err != nil {
					return err
				}
			}
		}
	})
	if err == nil {
		s.finishLater(ctx, m, later)
		s.boundMentionAll(ctx, []server.Message{m}) // mention_trim.go
		if m.IsEvent() {
			s.finishEvent(ctx, m)
		} else {
			s.moveIndex(ctx, m, append([]string{m.SenderID}, rcv...))
		}
	}
	return err
}

// receiversOf is receivers without blanks, repeats or the sender: one pending
// row each.
func receiversOf(sender string, receivers []string) []string {
	rcv := make([]string, 0, len(receivers))
	for _, r := range receivers {
		if r != "" && r != sender && !slices.Contains(rcv, r) {
			rcv = append(rcv, r)
		}
	}
	return rcv
}

// appendItems builds the transaction for plan. Pending rows past DynamoDB's
// 99 items (one is kept for an event's target) go to later, written after
// the commit (only a group of more than 95 receivers needs that).
func (s *Store) appendItems(m server.Message, plan appendPlan, reserved int) (items, later []planned) {
	items = s.messageItems(m)
	convKey := item{"conversation_id": sv(m.ConversationID)}
	folded := plan.folded && plan.newest
	mentionAll, mentioned := mentionPlan([]server.Message{m})
	switch {
	case plan.newest:
		set, vals := "SET last_seq = :seq", item{":seq": nv(m.SeqNo)}
		if !m.IsEvent() { // an event leaves the preview on the last message
			set += ", last_message_body = :b, last_message_sender = :snd, last_message_at = :t, last_message_seq = :seq"
			vals[":b"], vals[":snd"], vals[":t"] = sv(m.Preview()), sv(m.SenderID), tv(m.Timestamp)
		}
		set += archiveSet(m.ConversationID, m.Timestamp, vals)
		var names map[string]string
		if folded {
			// No condition of its own: last_seq < :seq says seq is above
			// every seq this attribute was ever set to.
			set += ", #sent = :seq"
			names = map[string]string{"#sent": sentAttr(m.SenderID)}
		}
		set += membershipSet(m, vals, &names) // SET clauses before addMentionAll's ADD
		set = addMentionAll(set, vals, mentionAll)
		items = append(items, planned{kind: kindConversation, tx: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.t.conversations), Key: convKey,
			UpdateExpression:          aws.String(set),
			ConditionExpression:       aws.String("attribute_exists(conversation_id) AND last_seq < :seq"),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: vals,
		}}})
	case len(mentionAll) > 0:
		vals := item{}
		items = append(items, planned{kind: kindConversation, tx: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.t.conversations), Key: convKey,
			UpdateExpression:          aws.String(addMentionAll("", vals, mentionAll)),
			ConditionExpression:       aws.String("attribute_exists(conversation_id)"),
			ExpressionAttributeValues: vals,
		}}})
	default:
		items = append(items, planned{kind: kindConversation, tx: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(s.t.conversations), Key: convKey,
			ConditionExpression: aws.String("attribute_exists(conversation_id)"),
		}}})
	}
	if !folded {
		if u := s.senderUpdate(m, plan.sender); u != nil {
			items = append(items, planned{kind: kindSender, user: m.SenderID, tx: types.TransactWriteItem{Update: u}})
		}
	}
	items = append(items, s.mentionItems(m.ConversationID, mentioned)...)
	var pend []planned
	for r, p := range plan.pending {
		if u := s.pendingUpdate(m, r, p); u != nil {
			pend = append(pend, planned{kind: kindPending, user: r, tx: types.TransactWriteItem{Update: u}})
		}
	}
	slices.SortFunc(pend, func(a, b planned) int { return cmpString(a.user, b.user) })
	room := maxTxItems - 1 - reserved // one for an event's target, and a membership event's own
	n := min(len(pend), room-len(items))
	return append(items, pend[:n]...), pend[n:]
}

// messageItems are the puts of m's row and its idempotency record, each guarded
// so that a taken seq_no or a stored message_id cancels the transaction.
func (s *Store) messageItems(m server.Message) []planned {
	msg := item{
		"conversation_id": sv(m.ConversationID), "seq_no": nv(m.SeqNo), "message_id": sv(m.MessageID),
		"sender_id": sv(m.SenderID), "content": sv(m.Content), "ts": tv(m.Timestamp),
	}
	if m.ReceiverID != "" {
		msg["receiver_id"] = sv(m.ReceiverID)
	}
	if m.S3Ref != "" {
		msg["s3_ref"] = sv(m.S3Ref)
	}
	if m.Attachment != "" {
		msg["attachment"] = sv(m.Attachment)
	}
	if m.AttachmentInfo != nil {
		b, _ := json.Marshal(m.AttachmentInfo) // strings and a number always encode
		msg["attachment_info"] = sv(string(b))
	}
	if m.Kind != "" {
		msg["kind"], msg["target_seq"] = sv(m.Kind), nv(m.TargetSeq)
	}
	if m.ReplyTo != 0 {
		msg["reply_to"] = nv(m.ReplyTo)
	}
	if len(m.Mentions) > 0 {
		msg["mentions"] = mentionsAttr(m.Mentions)
	}
	// ts lets SentMessages answer a resend from this record alone; so does a
	// reaction's kind and content (how its toggle went), and sender_id tells
	// a resend from another member's send of the same id.
	rec := item{"conversation_id": sv(m.ConversationID), "message_id": sv(m.MessageID), "seq_no": nv(m.SeqNo),
		"sender_id": sv(m.SenderID), "ts": tv(m.Timestamp), ttlAttr: nv(s.o.Now().Add(s.o.IdempotencyTTL).Unix())}
	if m.Kind == wire.KindReaction {
		rec["kind"], rec["content"] = sv(m.Kind), sv(m.Content)
	}
	return []planned{
		{kind: kindMessage, tx: types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.t.messages), Item: msg,
			ConditionExpression: aws.String("attribute_not_exists(seq_no)"),
		}}},
		{kind: kindMessageID, tx: types.TransactWriteItem{Put: &types.Put{
			TableName:           aws.String(s.t.messageIDs),
			Item:                rec,
			ConditionExpression: aws.String("attribute_not_exists(message_id)"),
		}}},
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *Store) senderUpdate(m server.Message, p senderPlan) *types.Update {
	key := item{"user_id": sv(m.SenderID), "conversation_id": sv(m.ConversationID)}
	switch p {
	case senderBoth:
		return &types.Update{TableName: aws.String(s.t.status), Key: key,
			UpdateExpression:          aws.String("SET last_delivered_seq = :seq, last_read_seq = :seq"),
			ConditionExpression:       aws.String("attribute_not_exists(last_delivered_seq) OR last_delivered_seq < :seq"),
			ExpressionAttributeValues: item{":seq": nv(m.SeqNo)}}
	case senderReadOnly:
		return &types.Update{TableName: aws.String(s.t.status), Key: key,
			UpdateExpression:          aws.String("SET last_read_seq = :seq"),
			ConditionExpression:       aws.String("last_delivered_seq >= :seq AND last_read_seq < :seq"),
			ExpressionAttributeValues: item{":seq": nv(m.SeqNo)}}
	}
	return nil
}

func (s *Store) pendingUpdate(m server.Message, receiver string, p pendingPlan) *types.Update {
	key := item{"receiver_id": sv(receiver), "conversation_id": sv(m.ConversationID)}
	switch p {
	case pendingNewest:
		return &types.Update{TableName: aws.String(s.t.pending), Key: key,
			UpdateExpression:          aws.String("SET first_undelivered_seq = if_not_exists(first_undelivered_seq, :seq), last_pending_seq = :seq"),
			ConditionExpression:       aws.String("attribute_not_exists(receiver_id) OR last_pending_seq < :seq"),
			ExpressionAttributeValues: item{":seq": nv(m.SeqNo)}}
	case pendingLower:
		return &types.Update{TableName: aws.String(s.t.pending), Key: key,
			UpdateExpression:          aws.String("SET first_undelivered_seq = :seq"),
			ConditionExpression:       aws.String("first_undelivered_seq > :seq"),
			ExpressionAttributeValues: item{":seq": nv(m.SeqNo)}}
	}
	return nil
}

// foldMembers is the largest conversation whose senders' boundaries are
// kept on the conversation item (sent:<user>, at most 5 + 32 bytes of name
// and 4 of number each) rather than in message_status: up to 26 of them add
// less than 1 KB to the item, so folding costs the conversation's write at
// most the 2 WCU the sender's row would have cost, and mostly nothing.
const foldMembers = 26

func foldSender(members int) bool { return members <= foldMembers }

// sentAttr is the conversation item's attribute holding the seq_no of
// user's last message there: a sender has delivered and read everything up
// to it (a reply implies read). A member's boundaries are the larger of it
// and their message_status row.
func sentAttr(user string) string { return "sent:" + user }

// activityUpdate moves a member's participants-index entry to the message's
// time; its condition also keeps it from creating an entry for a non-member.
func (s *Store) activityUpdate(m server.Message, user string) *types.Update {
	return &types.Update{TableName: aws.String(s.t.participants),
		Key:                       item{"conversation_id": sv(m.ConversationID), "user_id": sv(user)},
		UpdateExpression:          aws.String("SET activity = :t"),
		ConditionExpression:       aws.String("attribute_exists(user_id) AND activity < :t"),
		ExpressionAttributeValues: item{":t": tv(m.Timestamp)}}
}

// resolve turns a cancelled transaction into the domain error, or adjusts plan
// for a retry. conflict says another transaction held an item (retry after a
// pause).
func (s *Store) resolve(ctx context.Context, m server.Message, items []planned, reasons []string, plan *appendPlan) (conflict bool, err error) {
	failed := map[itemKind][]string{}
	for i, code := range reasons {
		switch {
		case code == "ConditionalCheckFailed" && i < len(items):
			failed[items[i].kind] = append(failed[items[i].kind], items[i].user)
		case code == "TransactionConflict", code == "ThrottlingError", code == "ProvisionedThroughputExceeded":
			conflict = true
		case code != "None" && code != "":
			return false, fmt.Errorf("append cancelled: item %d: %s", i, code)
		}
	}
	if _, ok := failed[kindMessageID]; ok {
		dup, err := s.original(ctx, m)
		if err != nil {
			return false, err
		}
		if dup != nil {
			if ownWrite(dup.Original, m) {
				return false, errOwnWrite
			}
			return false, dup
		}
		return true, nil // the idempotency record expired meanwhile: try again
	}
	if _, ok := failed[kindConversation]; ok {
		c, err := s.getConversation(ctx, m.ConversationID, true)
		if err != nil {
			return false, err // ErrNotFound included
		}
		if c.LastSeq >= m.SeqNo {
			// Never store a message behind a newer one: the caller takes a new seq.
			return false, server.ErrSeqTaken
		}
	}
	if _, ok := failed[kindMessage]; ok {
		return false, server.ErrSeqTaken
	}
	if _, ok := failed[kindTarget]; ok {
		return false, server.ErrTargetChanged
	}
	if _, ok := failed[kindMembership]; ok {
		return false, server.ErrTargetChanged
	}
	if _, ok := failed[kindSender]; ok {
		st, ok, err := s.getItem(ctx, s.t.status, item{"user_id": sv(m.SenderID), "conversation_id": sv(m.ConversationID)})
		if err != nil {
			return false, err
		}
		switch d, r := getN(st, "last_delivered_seq"), getN(st, "last_read_seq"); {
		case !ok || d < m.SeqNo:
			plan.sender = senderBoth
		case r < m.SeqNo:
			plan.sender = senderReadOnly
		default:
			plan.sender = senderNone
		}
	}
	for _, r := range failed[kindPending] {
		p, err := s.pendingPlanFor(ctx, m, r)
		if err != nil {
			return false, err
		}
		plan.pending[r] = p
	}
	return conflict, nil
}

var errOwnWrite = errors.New("the message was stored by this call")

// ownWrite says whether the original a message_id condition ran into is m
// itself: the SDK retried a request whose first attempt committed (DynamoDB
// answers such a retry with success, by the transaction's ClientRequestToken;
// test servers may not).
func ownWrite(original, m server.Message) bool {
	return original.SeqNo == m.SeqNo && original.SenderID == m.SenderID && original.Content == m.Content &&
		original.Attachment == m.Attachment && original.Timestamp.Equal(m.Timestamp)
}

func (s *Store) pendingPlanFor(ctx context.Context, m server.Message, receiver string) (pendingPlan, error) {
	row, ok, err := s.getItem(ctx, s.t.pending, item{"receiver_id": sv(receiver), "conversation_id": sv(m.ConversationID)})
	if err != nil {
		return 0, err
	}
	switch {
	case !ok || getN(row, "last_pending_seq") < m.SeqNo:
		return pendingNewest, nil
	case getN(row, "first_undelivered_seq") > m.SeqNo:
		return pendingLower, nil
	}
	return pendingNone, nil
}

// original reads the message a message_id was first stored as.
func (s *Store) original(ctx context.Context, m server.Message) (*server.DuplicateError, error) {
	rec, ok, err := s.getItem(ctx, s.t.messageIDs, item{"conversation_id": sv(m.ConversationID), "message_id": sv(m.MessageID)})
	if err != nil || !ok {
		return nil, err
	}
	orig, ok, err := s.getItem(ctx, s.t.messages, item{"conversation_id": sv(m.ConversationID), "seq_no": rec["seq_no"]})
	if err != nil || !ok {
		return nil, err
	}
	return &server.DuplicateError{Original: messageFrom(orig)}, nil
}

func (s *Store) getItem(ctx context.Context, table string, key item) (item, bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, false, err
	}
	return out.Item, out.Item != nil, nil
}

// laterTimeout bounds one pass over what did not fit in a message's
// transaction: a large group's pending rows are many single writes, more than
// one call's deadline allows.
const laterTimeout = 10 * time.Second

// finishLater writes what did not fit in m's transaction, once it has
// committed: m is stored, so nothing here may make its send look failed.
func (s *Store) finishLater(ctx context.Context, m server.Message, later []planned) {
	if len(later) == 0 {
		return
	}
	s.untilDone(ctx, m, "its pending rows", func(ctx context.Context) error { return s.applyLater(ctx, m, later) })
}

// untilDone runs fn, writes that follow m's committed transaction, once now;
// if that fails (DynamoDB throttling or down), again in the background, less
// and less often, until it works or the store closes. Each write must be
// idempotent, so a pass that repeats an earlier one changes nothing. what
// names the writes in the log ("its pending rows").
func (s *Store) untilDone(ctx context.Context, m server.Message, what string, fn func(context.Context) error) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), laterTimeout)
	err := fn(pctx)
	cancel()
	if err == nil {
		return
	}
	s.log.Warn("a stored message's follow-up writes are not done yet; retrying in the background",
		"writes", what, "conversation", m.ConversationID, "seq", m.SeqNo, "err", err)
	s.bg.Go(func() {
		wait := 200 * time.Millisecond
		for {
			select {
			case <-s.closing:
				s.log.Error("store closed before a stored message's follow-up writes were done",
					"writes", what, "conversation", m.ConversationID, "seq", m.SeqNo)
				return
			case <-time.After(wait):
			}
			pctx, cancel := context.WithTimeout(context.Background(), laterTimeout)
			err := fn(pctx)
			cancel()
			if err == nil {
				s.log.Info("a stored message's follow-up writes are done", "writes", what, "conversation", m.ConversationID, "seq", m.SeqNo)
				return
			}
			wait = min(2*wait, 10*time.Second)
		}
	})
}

// applyLater writes what follows a commit: index activity (moveIndex; a
// failed condition means nothing to do) and pending rows that did not fit in
// the transaction (re-planned from their current state when the condition
// fails).
func (s *Store) applyLater(ctx context.Context, m server.Message, later []planned) error {
	if len(later) == 0 {
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, p := range later {
		g.Go(func() error {
			u := p.tx.Update
			for attempt := 1; u != nil; attempt++ {
				_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
					TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
					ConditionExpression: u.ConditionExpression, ExpressionAttributeValues: u.ExpressionAttributeValues,
				})
				if err == nil || (isCondFailed(err) && p.kind == kindActivity) {
					return nil
				}
				if !isCondFailed(err) || attempt == 5 {
					return fmt.Errorf("append %s seq %d: %v of %s: %w", m.ConversationID, m.SeqNo, p.kind, p.user, err)
				}
				plan, err := s.pendingPlanFor(ctx, m, p.user)
				if err != nil {
					return err
				}
				u = s.pendingUpdate(m, p.user, plan)
			}
			return nil
		})
	}
	return g.Wait()
}

func messageFrom(it item) server.Message {
	return server.Message{
		ConversationID: getS(it, "conversation_id"),
		SeqNo:          getN(it, "seq_no"),
		MessageID:      getS(it, "message_id"),
		SenderID:       getS(it, "sender_id"),
		ReceiverID:     getS(it, "receiver_id"),
		Content:        getS(it, "content"),
		Timestamp:      getT(it, "ts"),
		S3Ref:          getS(it, "s3_ref"),
		Attachment:     getS(it, "attachment"),
		AttachmentInfo: getAttachmentInfo(it),
		Kind:           getS(it, "kind"),
		TargetSeq:      getN(it, "target_seq"),
		ReplyTo:        getN(it, "reply_to"),
		Edited:         getBool(it, "edited"),
		Deleted:        getBool(it, "deleted"),
		Reactions:      getStringMap(it, "reactions"),
		UpdatedSeq:     getN(it, "updated_seq"),
		Mentions:       getMentions(it),
	}
}

// NextSeq is the fallback counter (the Sequencer's, while Redis is down): the
// conversation item's counter, moved to max(counter, last_seq)+1 by a
// conditional write that also leaves a claim, a token of this call. The SDK
// resends a request whose answer it lost; a blind ADD would then count twice
// and leave a gap in seq_no. A resend of this write fails its condition
// instead, and the claim on the item says the number is ours.
func (s *Store) NextSeq(ctx context.Context, convID string) (int64, error) {
	var seq int64
	claim := rand.Text()
	err := s.do(ctx, "next seq", func(ctx context.Context) error {
		for attempt := 1; ; attempt++ {
			c, err := s.counter(ctx, convID)
			if err != nil {
				return err
			}
			if c.claim == claim {
				seq = c.counter // an earlier attempt's write was made
				return nil
			}
			next := max(c.counter, c.lastSeq) + 1
			cond := "attribute_exists(conversation_id) AND attribute_not_exists(#c)"
			vals := item{":next": nv(next), ":claim": sv(claim)}
			if c.hasCounter {
				cond = "#c = :seen"
				vals[":seen"] = nv(c.counter)
			}
			_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(convID)},
				UpdateExpression:          aws.String("SET #c = :next, #k = :claim"),
				ConditionExpression:       aws.String(cond),
				ExpressionAttributeNames:  map[string]string{"#c": "counter", "#k": "counter_claim"},
				ExpressionAttributeValues: vals,
			})
			if err == nil {
				seq = next
				return nil
			}
			if !isCondFailed(err) || attempt == 10 {
				return err
			}
			// Another node took a number first, or this write was made and its
			// answer lost: the next read tells.
		}
	})
	return seq, err
}

type seqCounter struct {
	counter, lastSeq int64
	hasCounter       bool
	claim            string
}

// counter reads the conversation item's counter, last_seq and claim.
func (s *Store) counter(ctx context.Context, convID string) (seqCounter, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(convID)}, ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#c, last_seq, #k"),
		ExpressionAttributeNames: map[string]string{"#c": "counter", "#k": "counter_claim"},
	})
	if err != nil {
		return seqCounter{}, err
	}
	if out.Item == nil {
		return seqCounter{}, server.ErrNotFound
	}
	_, has := out.Item["counter"]
	return seqCounter{counter: getN(out.Item, "counter"), lastSeq: getN(out.Item, "last_seq"), hasCounter: has,
		claim: getS(out.Item, "counter_claim")}, nil
}

// ListMessages queries the conversation's partition below beforeSeq, newest
// first, following LastEvaluatedKey until limit. Strongly consistent: a client
// catching up right after a push must see the message.
func (s *Store) ListMessages(ctx context.Context, convID string, beforeSeq int64, limit int) ([]server.Message, error) {
	if beforeSeq <= 0 {
		beforeSeq = 1<<63 - 1
	}
	return s.queryMessages(ctx, "list messages", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("conversation_id = :c AND seq_no < :s"),
		ExpressionAttributeValues: item{":c": sv(convID), ":s": nv(beforeSeq)},
		ScanIndexForward:          aws.Bool(false),
	}, limit)
}

// ListMessagesAfter queries above afterSeq, oldest first.
func (s *Store) ListMessagesAfter(ctx context.Context, convID string, afterSeq int64, limit int) ([]server.Message, error) {
	return s.queryMessages(ctx, "list messages after", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("conversation_id = :c AND seq_no > :s"),
		ExpressionAttributeValues: item{":c": sv(convID), ":s": nv(afterSeq)},
		ScanIndexForward:          aws.Bool(true),
	}, limit)
}

// SentMessages reads the idempotency records of messageIDs (one BatchGetItem
// per 100); a record written before it carried ts and sender_id costs a read
// of its message.
func (s *Store) SentMessages(ctx context.Context, convID string, messageIDs []string) (map[string]server.Message, error) {
	out := map[string]server.Message{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	keys := make([]item, 0, len(messageIDs))
	for _, id := range uniqueStrings(slices.Clone(messageIDs)) { // BatchGetItem refuses duplicate keys
		keys = append(keys, item{"conversation_id": sv(convID), "message_id": sv(id)})
	}
	err := s.do(ctx, "sent messages", func(ctx context.Context) error {
		got, err := s.batchGet(ctx, map[string][]item{s.t.messageIDs: keys})
		if err != nil {
			return err
		}
		var old []item
		for _, rec := range got[s.t.messageIDs] {
			_, hasTS := rec["ts"]
			if _, hasSender := rec["sender_id"]; !hasTS || !hasSender {
				old = append(old, item{"conversation_id": sv(convID), "seq_no": rec["seq_no"]})
				continue
			}
			m := server.Message{ConversationID: convID, MessageID: getS(rec, "message_id"), SeqNo: getN(rec, "seq_no"), Timestamp: getT(rec, "ts"),
				SenderID: getS(rec, "sender_id"), Kind: getS(rec, "kind"), Content: getS(rec, "content")}
			out[m.MessageID] = m
		}
		if len(old) > 0 {
			msgs, err := s.batchGet(ctx, map[string][]item{s.t.messages: old})
			if err != nil {
				return err
			}
			for _, it := range msgs[s.t.messages] {
				m := messageFrom(it)
				out[m.MessageID] = m
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CountMessages is a Query with Select COUNT on the key range: it reads (and is
// billed for) the items it counts, so callers bound it with limit.
func (s *Store) CountMessages(ctx context.Context, convID string, afterSeq, upTo int64, limit int) (int, error) {
	if upTo <= afterSeq || limit < 1 {
		return 0, nil
	}
	var n int
	err := s.do(ctx, "count messages", func(ctx context.Context) error {
		n = 0
		q := &dynamodb.QueryInput{
			TableName:                 aws.String(s.t.messages),
			KeyConditionExpression:    aws.String("conversation_id = :c AND seq_no BETWEEN :a AND :b"),
			FilterExpression:          aws.String("attribute_not_exists(kind)"), // events are not unread messages
			ExpressionAttributeValues: item{":c": sv(convID), ":a": nv(afterSeq + 1), ":b": nv(upTo)},
			Select:                    types.SelectCount,
			ConsistentRead:            aws.Bool(true),
		}
		for {
			q.Limit = aws.Int32(int32(min(limit-n, 1000)))
			page, err := s.db.Query(ctx, q)
			if err != nil {
				return err
			}
			n += int(page.Count)
			if n >= limit || page.LastEvaluatedKey == nil {
				return nil
			}
			q.ExclusiveStartKey = page.LastEvaluatedKey
		}
	})
	if err != nil {
		return 0, err
	}
	return min(n, limit), nil
}

func (s *Store) queryMessages(ctx context.Context, op string, in *dynamodb.QueryInput, limit int) ([]server.Message, error) {
	if limit < 1 {
		return nil, nil
	}
	in.TableName = aws.String(s.t.messages)
	in.ConsistentRead = aws.Bool(true)
	var out []server.Message
	err := s.do(ctx, op, func(ctx context.Context) error {
		out = out[:0]
		q := *in
		for {
			q.Limit = aws.Int32(int32(min(limit-len(out), 1000)))
			page, err := s.db.Query(ctx, &q)
			if err != nil {
				return err
			}
			for _, it := range page.Items {
				out = append(out, messageFrom(it))
			}
			if len(out) >= limit || len(page.LastEvaluatedKey) == 0 {
				return nil
			}
			q.ExclusiveStartKey = page.LastEvaluatedKey
		}
	})
	return out, err
}

// ListStatuses reads the users' rows and the conversation (the senders'
// boundaries folded into it, sentAttr) by key, in one BatchGetItem.
func (s *Store) ListStatuses(ctx context.Context, convID string, userIDs []string) ([]server.Status, error) {
	out := make([]server.Status, len(userIDs))
	for i, u := range userIDs {
		out[i] = server.Status{UserID: u, ConversationID: convID}
	}
	if len(userIDs) == 0 {
		return out, nil
	}
	err := s.do(ctx, "list statuses", func(ctx context.Context) error {
		var keys []item
		for _, u := range uniqueStrings(slices.Clone(userIDs)) {
			keys = append(keys, item{"user_id": sv(u), "conversation_id": sv(convID)})
		}
		got, err := s.batchGet(ctx, map[string][]item{s.t.status: keys, s.t.conversations: {{"conversation_id": sv(convID)}}})
		if err != nil {
			return err
		}
		byUser := map[string]item{}
		for _, it := range got[s.t.status] {
			byUser[getS(it, "user_id")] = it
		}
		var conv item
		if cs := got[s.t.conversations]; len(cs) > 0 {
			conv = cs[0]
		}
		for i := range out {
			it := byUser[out[i].UserID]
			out[i].LastDeliveredSeq, out[i].LastReadSeq = withSent(conv, out[i].UserID, getN(it, "last_delivered_seq"), getN(it, "last_read_seq"))
		}
		return nil
	})
	return out, err
}

// AdvanceStatus reads the row and the sender's boundary folded into the
// conversation item (sentAttr), clears or advances the pending row if
// delivery moves, then writes the raised boundaries conditioned on the row's
// values read (retrying on a race). The pending write goes first, so once the new boundary
// is visible nothing at or below it is pending. They are separate writes (the
// pending row is a hint for redelivery): a crash between them leaves the
// boundary behind until the next ack, which the client sends anyway.
func (s *Store) AdvanceStatus(ctx context.Context, userID, convID string, delivered, read int64) (server.Status, bool, error) {
	st := server.Status{UserID: userID, ConversationID: convID}
	delivered = max(delivered, read)
	var changed bool
	// The values a write of ours may already have set: the SDK retries an
	// UpdateItem whose answer was lost, and the retry then fails its condition
	// although the first try applied. Finding the row at exactly those values
	// counts as our move (at worst one status push too many, never one lost).
	var wrote *server.Status
	err := s.do(ctx, "advance status", func(ctx context.Context) error {
		key := item{"user_id": sv(userID), "conversation_id": sv(convID)}
		var cleared int64 // pending cleared up to here already
		for attempt := 1; ; attempt++ {
			got, err := s.batchGet(ctx, map[string][]item{s.t.status: {key}, s.t.conversations: {{"conversation_id": sv(convID)}}})
			if err != nil {
				return err
			}
			var row, conv item
			if rows := got[s.t.status]; len(rows) > 0 {
				row = rows[0]
			}
			if cs := got[s.t.conversations]; len(cs) > 0 {
				conv = cs[0]
			}
			exists := row != nil
			d0, r0 := getN(row, "last_delivered_seq"), getN(row, "last_read_seq")
			if wrote != nil && d0 == wrote.LastDeliveredSeq && r0 == wrote.LastReadSeq {
				st.LastDeliveredSeq, st.LastReadSeq = withSent(conv, userID, d0, r0)
				changed = true
				return nil
			}
			// The boundaries as they stand (row and folded sent), and as
			// this ack leaves them.
			d1, r1 := withSent(conv, userID, d0, r0)
			st.LastDeliveredSeq, st.LastReadSeq = max(d1, delivered), max(r1, read)
			if changed = st.LastDeliveredSeq != d1 || st.LastReadSeq != r1; !changed {
				// The boundary may have moved without the pending row (a reply's
				// implicit read): an ack it covers must still clear the row, or
				// the acked messages come again on every reconnect. Only up to
				// the ack, not the boundary: the reply may have passed messages
				// still on their way to this device, and their pending row is
				// what brings them again if the live copy is lost.
				if delivered > 0 && cleared < delivered {
					return s.clearPending(ctx, userID, convID, delivered)
				}
				return nil
			}
			if st.LastDeliveredSeq > max(d1, cleared) {
				if err := s.clearPending(ctx, userID, convID, st.LastDeliveredSeq); err != nil {
					return err
				}
				cleared = st.LastDeliveredSeq
			}
			in := &dynamodb.UpdateItemInput{
				TableName: aws.String(s.t.status), Key: key,
				UpdateExpression:          aws.String("SET last_delivered_seq = :d, last_read_seq = :r"),
				ExpressionAttributeValues: item{":d": nv(st.LastDeliveredSeq), ":r": nv(st.LastReadSeq)},
			}
			s.trimMentions(in, row, st.LastReadSeq)
			if exists {
				in.ConditionExpression = aws.String("last_delivered_seq = :d0 AND last_read_seq = :r0")
				in.ExpressionAttributeValues[":d0"], in.ExpressionAttributeValues[":r0"] = nv(d0), nv(r0)
			} else {
				in.ConditionExpression = aws.String("attribute_not_exists(user_id)")
			}
			wrote = &server.Status{LastDeliveredSeq: st.LastDeliveredSeq, LastReadSeq: st.LastReadSeq}
			_, err = s.db.UpdateItem(ctx, in)
			if err == nil {
				return nil
			}
			if !isCondFailed(err) || attempt == 10 {
				return err
			}
		}
	})
	return st, changed, err
}

func (s *Store) clearPending(ctx context.Context, userID, convID string, delivered int64) error {
	key := item{"receiver_id": sv(userID), "conversation_id": sv(convID)}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.t.pending), Key: key,
		ConditionExpression:       aws.String("last_pending_seq <= :d"),
		ExpressionAttributeValues: item{":d": nv(delivered)},
	})
	if !isCondFailed(err) {
		return err
	}
	// Something newer is pending (or there is no row): move the start past what
	// is delivered, if the row is there and behind.
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.t.pending), Key: key,
		UpdateExpression:          aws.String("SET first_undelivered_seq = :next"),
		ConditionExpression:       aws.String("first_undelivered_seq <= :d"),
		ExpressionAttributeValues: item{":d": nv(delivered), ":next": nv(delivered + 1)},
	})
	if isCondFailed(err) {
		return nil
	}
	return err
}

// ListPending queries the user's partition of pending_deliveries.
func (s *Store) ListPending(ctx context.Context, userID string) ([]server.Pending, error) {
	var out []server.Pending
	err := s.do(ctx, "list pending", func(ctx context.Context) error {
		out = out[:0]
		return s.queryEach(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.t.pending),
			KeyConditionExpression:    aws.String("receiver_id = :u"),
			ExpressionAttributeValues: item{":u": sv(userID)},
			ConsistentRead:            aws.Bool(true),
		}, func(it item) bool {
			out = append(out, server.Pending{ReceiverID: userID, ConversationID: getS(it, "conversation_id"),
				FirstUndeliveredSeq: getN(it, "first_undelivered_seq")})
			return true
		})
	})
	return out, err
}
