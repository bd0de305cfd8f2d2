package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// maxTxItems is DynamoDB's limit on the items of one transaction.
const maxTxItems = 100

func convItem(c server.Conversation) item {
	return item{
		"conversation_id":     sv(c.ID),
		"type":                sv(c.Type),
		"name":                sv(c.Name),
		"topic":               sv(c.Topic),
		"last_seq":            nv(c.LastSeq),
		"counter":             nv(0),
		"last_message_body":   sv(c.LastMessageBody),
		"last_message_sender": sv(c.LastMessageSender),
		"last_message_at":     tv(c.LastMessageAt),
		"created_at":          tv(c.CreatedAt),
	}
}

func convFrom(it item) server.Conversation {
	c := server.Conversation{
		ID:                getS(it, "conversation_id"),
		Type:              getS(it, "type"),
		Name:              getS(it, "name"),
		LastSeq:           getN(it, "last_seq"),
		LastMessageBody:   getS(it, "last_message_body"),
		LastMessageSender: getS(it, "last_message_sender"),
		LastMessageAt:     getT(it, "last_message_at"),
		CreatedAt:         getT(it, "created_at"),
		Topic:             getS(it, "topic"),
	}
	if getN(it, "last_message_seq") == 0 && getS(it, "event_body") != "" {
		// No message yet: the last membership event is the preview
		// (channels_dynamo.go), with no sender: the line names who made it.
		c.LastMessageBody, c.LastMessageSender = getS(it, "event_body"), ""
	}
	return c
}

// activity is what the participants index sorts a conversation by: its last
// message, or its creation before it has one (as the SQLite store orders).
func activity(c server.Conversation) int64 { return max(ns(c.LastMessageAt), ns(c.CreatedAt)) }

func (s *Store) participantPut(p server.Participant, act int64) *types.Put {
	return &types.Put{
		TableName: aws.String(s.t.participants),
		Item: item{
			"conversation_id": sv(p.ConversationID), "user_id": sv(p.UserID),
			"role": sv(p.Role), "joined_at": tv(p.JoinedAt), "activity": nv(act),
		},
		ConditionExpression: aws.String("attribute_not_exists(user_id)"),
	}
}

// CreateConversation writes the conversation and its members in one transaction
// (the first 99 members; a larger group's others follow in further writes).
func (s *Store) CreateConversation(ctx context.Context, c server.Conversation, members []server.Participant) error {
	if c.ID == "" {
		return fmt.Errorf("dynamo create conversation: empty id")
	}
	members = uniqueMembers(c.ID, members)
	act := activity(c)
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(s.t.conversations), Item: convItem(c),
		ConditionExpression: aws.String("attribute_not_exists(conversation_id)"),
	}}}
	if c.Type == wire.Channel {
		items = append(items, types.TransactWriteItem{Put: s.directoryPut(c)})
	}
	first := members[:min(len(members), maxTxItems-len(items))]
	for _, p := range first {
		items = append(items, types.TransactWriteItem{Put: s.participantPut(p, act)})
	}
	return s.do(ctx, "create conversation", func(ctx context.Context) error {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if r := cancelReasons(err); r != nil && r[0] == "ConditionalCheckFailed" {
			return server.ErrExists
		}
		if err != nil {
			return err
		}
		_, err = s.putParticipants(ctx, members[len(first):], act)
		return err
	})
}

// uniqueMembers sets the conversation id and keeps the first of each user.
func uniqueMembers(convID string, members []server.Participant) []server.Participant {
	out := make([]server.Participant, 0, len(members))
	seen := make(map[string]bool, len(members))
	for _, p := range members {
		if p.UserID == "" || seen[p.UserID] {
			continue
		}
		seen[p.UserID] = true
		p.ConversationID = convID
		out = append(out, p)
	}
	return out
}

// putParticipants adds members that are not there yet, a conditional PutItem
// each (a few at a time): existing members keep their role and join time.
// added is the users it added.
func (s *Store) putParticipants(ctx context.Context, members []server.Participant, act int64) (added []string, err error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	fresh := make([]bool, len(members))
	for i, p := range members {
		g.Go(func() error {
			put := s.participantPut(p, act)
			_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item, ConditionExpression: put.ConditionExpression})
			if err != nil && !isCondFailed(err) {
				return fmt.Errorf("add participant %s: %w", p.UserID, err)
			}
			fresh[i] = err == nil
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, p := range members {
		if fresh[i] {
			added = append(added, p.UserID)
		}
	}
	return added, nil
}

func (s *Store) getConversation(ctx context.Context, id string, consistent bool) (server.Conversation, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.t.conversations), Key: item{"conversation_id": sv(id)}, ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return server.Conversation{}, err
	}
	if out.Item == nil {
		return server.Conversation{}, server.ErrNotFound
	}
	return convFrom(out.Item), nil
}

// GetConversation reads strongly consistently: callers check last_seq and
// membership right after writes.
func (s *Store) GetConversation(ctx context.Context, id string) (server.Conversation, error) {
	var c server.Conversation
	err := s.do(ctx, "get conversation", func(ctx context.Context) (err error) {
		c, err = s.getConversation(ctx, id, true)
		return err
	})
	return c, err
}

func participantFrom(it item) server.Participant {
	return server.Participant{
		ConversationID: getS(it, "conversation_id"), UserID: getS(it, "user_id"),
		Role: getS(it, "role"), JoinedAt: getT(it, "joined_at"),
	}
}

func (s *Store) GetParticipant(ctx context.Context, convID, userID string) (server.Participant, error) {
	var p server.Participant
	err := s.do(ctx, "get participant", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.t.participants), ConsistentRead: aws.Bool(true),
			Key: item{"conversation_id": sv(convID), "user_id": sv(userID)},
		})
		if err != nil {
			return err
		}
		if out.Item == nil {
			return server.ErrNotFound
		}
		p = participantFrom(out.Item)
		return nil
	})
	return p, err
}

// ListParticipants is a Query on the conversation's partition, in user id order.
func (s *Store) ListParticipants(ctx context.Context, convID string) ([]server.Participant, error) {
	var out []server.Participant
	err := s.do(ctx, "list participants", func(ctx context.Context) error {
		out = out[:0]
		return s.queryEach(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.t.participants),
			KeyConditionExpression:    aws.String("conversation_id = :c"),
			ExpressionAttributeValues: item{":c": sv(convID)},
			ConsistentRead:            aws.Bool(true),
		}, func(it item) bool {
			out = append(out, participantFrom(it))
			return true
		})
	})
	return out, err
}

// AddParticipants reads the conversation (ErrNotFound, the activity the new
// members' index entries start at, and the seq_no their mention count starts
// after) and adds the members not there yet. The join point is the last_seq
// read before the write: an @all sent between the two counts for them.
func (s *Store) AddParticipants(ctx context.Context, convID string, members []server.Participant) error {
	return s.do(ctx, "add participants", func(ctx context.Context) error {
		c, err := s.getConversation(ctx, convID, true)
		if err != nil {
			return err
		}
		added, err := s.putParticipants(ctx, uniqueMembers(convID, members), activity(c))
		if err != nil || c.LastSeq == 0 {
			return err // nothing before them to leave out
		}
		return s.setMentionFrom(ctx, convID, added, c.LastSeq)
	})
}

// RemoveParticipant deletes the membership and the user's pending row in one
// transaction, and keeps the user's @all mentions (mention_leavers.go). Their boundary folded into the conversation item (sentAttr)
// moves to their message_status row in the same write, so the item holds
// only members' (it stays small) and a member added back finds their
// boundaries where they were.
func (s *Store) RemoveParticipant(ctx context.Context, convID, userID string) error {
	return s.do(ctx, "remove participant", func(ctx context.Context) error {
		statusKey := item{"user_id": sv(userID), "conversation_id": sv(convID)}
		convKey := item{"conversation_id": sv(convID)}
		for attempt := 1; ; attempt++ {
			got, err := s.batchGet(ctx, map[string][]item{s.t.status: {statusKey}, s.t.conversations: {convKey}})
			if err != nil {
				return err
			}
			items := []types.TransactWriteItem{
				{Delete: &types.Delete{
					TableName:           aws.String(s.t.participants),
					Key:                 item{"conversation_id": sv(convID), "user_id": sv(userID)},
					ConditionExpression: aws.String("attribute_exists(user_id)"),
				}},
				{Delete: &types.Delete{
					TableName: aws.String(s.t.pending),
					Key:       item{"receiver_id": sv(userID), "conversation_id": sv(convID)},
				}},
			}
			var conv, row item
			if cs := got[s.t.conversations]; len(cs) > 0 {
				conv = cs[0]
			}
			if rows := got[s.t.status]; len(rows) > 0 {
				row = rows[0]
			}
			fold := s.mentionFold(convID, userID, getNS(conv, mentionAllAttr), row) // mention_leavers.go
			if sent, ok := conv[sentAttr(userID)]; ok {
				names := map[string]string{"#sent": sentAttr(userID)}
				items = append(items, types.TransactWriteItem{Update: &types.Update{
					TableName: aws.String(s.t.conversations), Key: convKey,
					UpdateExpression:          aws.String("REMOVE #sent"),
					ConditionExpression:       aws.String("#sent = :v"),
					ExpressionAttributeNames:  names,
					ExpressionAttributeValues: item{":v": sent},
				}})
				d0, r0 := getN(row, "last_delivered_seq"), getN(row, "last_read_seq")
				if d, r := withSent(conv, userID, d0, r0); d != d0 || r != r0 {
					u := &types.Update{TableName: aws.String(s.t.status), Key: statusKey,
						UpdateExpression:          aws.String("SET last_delivered_seq = :d, last_read_seq = :r"),
						ConditionExpression:       aws.String("attribute_not_exists(user_id)"),
						ExpressionAttributeValues: item{":d": nv(d), ":r": nv(r)}}
					if row != nil {
						u.ConditionExpression = aws.String("last_delivered_seq = :d0 AND last_read_seq = :r0")
						u.ExpressionAttributeValues[":d0"], u.ExpressionAttributeValues[":r0"] = nv(d0), nv(r0)
					}
					if fold != nil { // one update of the row: the fold's ADD joins it
						u.UpdateExpression = aws.String(*u.UpdateExpression + " ADD " + mentionSeqsAttr + " :folded")
						u.ExpressionAttributeValues[":folded"] = fold.ExpressionAttributeValues[":folded"]
						fold = nil
					}
					items = append(items, types.TransactWriteItem{Update: u})
				}
			}
			if fold != nil {
				items = append(items, types.TransactWriteItem{Update: fold})
			}
			_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
			r := cancelReasons(err)
			switch {
			case r == nil:
				return err
			case r[0] == "ConditionalCheckFailed":
				return server.ErrNotFound
			case attempt == 10:
				return fmt.Errorf("remove %s from %s: still cancelled after %d attempts: %w", userID, convID, attempt, err)
			}
			// A send or an ack moved a boundary since the read: read again.
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		}
	})
}

// Inbox queries the participants index newest first, then reads the
// conversations and the user's statuses by key (BatchGetItem). An index
// entry may lag its conversation by up to InboxIndexLag (index.go), so the
// query reads on past the limit-th entry while entries are within that of
// it (no conversation further down can be more recent than the limit-th),
// and the page is ordered by the later of an entry's index activity and its
// conversation's own (whose last message may carry an older time than an
// earlier one, from another node's clock: the index never moves back).
func (s *Store) Inbox(ctx context.Context, userID string, limit int) ([]server.InboxEntry, error) {
	if limit < 1 {
		return nil, fmt.Errorf("dynamo inbox: limit %d must be at least 1", limit)
	}
	lag := int64(s.o.InboxIndexLag)
	var out []server.InboxEntry
	err := s.do(ctx, "inbox", func(ctx context.Context) error {
		var ids []string
		var floor int64
		acts := map[string]int64{}
		err := s.queryEach(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.t.participants),
			IndexName:                 aws.String(byUserIndex),
			KeyConditionExpression:    aws.String("user_id = :u"),
			ExpressionAttributeValues: item{":u": sv(userID)},
			ScanIndexForward:          aws.Bool(false),
			Limit:                     aws.Int32(int32(min(limit+10, 1000))),
		}, func(it item) bool {
			act := getN(it, "activity")
			if len(ids) >= limit && act <= floor {
				return false
			}
			id := getS(it, "conversation_id")
			ids, acts[id] = append(ids, id), act
			if len(ids) == limit {
				floor = act - lag
			}
			return len(ids) < limit+inboxSlack
		})
		if err != nil {
			return err
		}
		if out, err = s.entries(ctx, userID, ids, false); err != nil {
			return err
		}
		slices.SortStableFunc(out, func(a, b server.InboxEntry) int {
			at := func(e server.InboxEntry) int64 { return max(acts[e.Conversation.ID], activity(e.Conversation)) }
			return cmp.Compare(at(b), at(a))
		})
		out = out[:min(len(out), limit)]
		return nil
	})
	return out, err
}

// InboxEntries reads the memberships, conversations and statuses by key.
func (s *Store) InboxEntries(ctx context.Context, userID string, convIDs []string) ([]server.InboxEntry, error) {
	var out []server.InboxEntry
	err := s.do(ctx, "inbox entries", func(ctx context.Context) (err error) {
		out, err = s.entries(ctx, userID, convIDs, true)
		return err
	})
	return out, err
}

// entries builds inbox entries in the order of convIDs, skipping conversations
// that are gone and, if checkMember, those the user is not in.
func (s *Store) entries(ctx context.Context, userID string, convIDs []string, checkMember bool) ([]server.InboxEntry, error) {
	convIDs = uniqueStrings(slices.Clone(convIDs)) // BatchGetItem refuses duplicate keys
	if len(convIDs) == 0 {
		return nil, nil
	}
	keys := map[string][]item{}
	for _, id := range convIDs {
		keys[s.t.conversations] = append(keys[s.t.conversations], item{"conversation_id": sv(id)})
		keys[s.t.status] = append(keys[s.t.status], item{"user_id": sv(userID), "conversation_id": sv(id)})
		if checkMember {
			keys[s.t.participants] = append(keys[s.t.participants], item{"conversation_id": sv(id), "user_id": sv(userID)})
		}
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	convs := map[string]item{}
	for _, it := range got[s.t.conversations] {
		convs[getS(it, "conversation_id")] = it
	}
	statuses := map[string]item{}
	for _, it := range got[s.t.status] {
		statuses[getS(it, "conversation_id")] = it
	}
	member := map[string]bool{}
	for _, it := range got[s.t.participants] {
		member[getS(it, "conversation_id")] = true
	}
	out := make([]server.InboxEntry, 0, len(convIDs))
	for _, id := range convIDs {
		c, ok := convs[id]
		if !ok || (checkMember && !member[id]) {
			continue
		}
		st := statuses[id]
		d, r := withSent(c, userID, getN(st, "last_delivered_seq"), getN(st, "last_read_seq"))
		out = append(out, server.InboxEntry{
			Conversation: convFrom(c),
			Status:       server.Status{UserID: userID, ConversationID: id, LastDeliveredSeq: d, LastReadSeq: r},
			MentionSeqs:  entryMentions(c, st),
		})
	}
	return out, nil
}

// withSent is a member's boundaries: their message_status row's (delivered,
// read), raised to the seq_no of their last message the conversation item
// holds (sentAttr).
func withSent(conv item, user string, delivered, read int64) (int64, int64) {
	sent := getN(conv, sentAttr(user))
	return max(delivered, sent), max(read, sent)
}

func uniqueStrings(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// batchGet reads keys from several tables, 100 keys per request, retrying
// unprocessed keys with backoff. Reads are strongly consistent.
func (s *Store) batchGet(ctx context.Context, keys map[string][]item) (map[string][]item, error) {
	type tk struct {
		table string
		key   item
	}
	var all []tk
	for table, ks := range keys {
		for _, k := range ks {
			all = append(all, tk{table, k})
		}
	}
	slices.SortFunc(all, func(a, b tk) int { return strings.Compare(a.table, b.table) })
	out := map[string][]item{}
	for len(all) > 0 {
		chunk := all[:min(len(all), 100)]
		all = all[len(chunk):]
		req := map[string]types.KeysAndAttributes{}
		for _, c := range chunk {
			ka := req[c.table]
			ka.Keys = append(ka.Keys, c.key)
			ka.ConsistentRead = aws.Bool(true)
			req[c.table] = ka
		}
		for attempt := 1; len(req) > 0; attempt++ {
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, err
			}
			for table, items := range res.Responses {
				out[table] = append(out[table], items...)
			}
			req = res.UnprocessedKeys
			if len(req) > 0 {
				if attempt > 8 {
					return nil, fmt.Errorf("batch get: keys still unprocessed after %d attempts", attempt)
				}
				if err := backoff(ctx, attempt); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}
