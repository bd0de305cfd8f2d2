package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatterm/chat/server"
)

// CreateUser is one transaction: the user Put (if absent), the first-user marker
// Put (if claim.First, if absent), the invite Delete (if claim.InviteHash, if
// present and unexpired).
func (s *Store) CreateUser(ctx context.Context, u server.User, claim server.Claim) error {
	if u.ID == "" {
		return fmt.Errorf("dynamo create user: empty id")
	}
	userItem := item{
		"user_id":       sv(u.ID),
		"display_name":  sv(u.DisplayName),
		"status":        sv(u.Status),
		"password_hash": &types.AttributeValueMemberB{Value: u.PasswordHash},
		"admin":         bv(u.Admin),
		"hide_presence": bv(u.HidePresence),
		"created_at":    tv(u.CreatedAt),
	}
	if len(u.PasswordHash) == 0 {
		delete(userItem, "password_hash") // B values may not be empty
	}
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(s.t.users), Item: userItem,
		ConditionExpression: aws.String("attribute_not_exists(user_id)"),
	}}}
	firstAt, inviteAt := -1, -1
	if claim.First {
		firstAt = len(items)
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName:           aws.String(s.t.users),
			Item:                item{"user_id": sv(firstUserKey), "claimed_by": sv(u.ID)},
			ConditionExpression: aws.String("attribute_not_exists(user_id)"),
		}})
	}
	// Each name key is an item of the users table ("#key#" + key, user ids
	// cannot contain '#') owned by one account: the check against every
	// other account is this condition, not a scan.
	keysAt := len(items)
	for _, k := range u.NameKeys {
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName:           aws.String(s.t.users),
			Item:                item{"user_id": sv(nameKeyItem(k)), "owner": sv(u.ID)},
			ConditionExpression: aws.String("attribute_not_exists(user_id)"),
		}})
	}
	if len(u.NameKeys) > 0 {
		userItem["name_keys"] = &types.AttributeValueMemberSS{Value: u.NameKeys}
	}
	if claim.InviteHash != "" {
		inviteAt = len(items)
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{
			TableName:                 aws.String(s.t.invites),
			Key:                       item{"hash": sv(claim.InviteHash)},
			ConditionExpression:       aws.String("attribute_exists(#h) AND expires_at > :now"),
			ExpressionAttributeNames:  map[string]string{"#h": "hash"}, // a reserved word
			ExpressionAttributeValues: item{":now": tv(claim.Now)},
		}})
	}
	return s.do(ctx, "create user", func(ctx context.Context) error {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		reasons := cancelReasons(err)
		if reasons == nil {
			return err
		}
		failed := func(i int) bool { return i >= 0 && i < len(reasons) && reasons[i] == "ConditionalCheckFailed" }
		// The same precedence as the SQLite store: first-account claim, invite, id.
		switch {
		case failed(firstAt):
			return server.ErrNotFirst
		case failed(inviteAt):
			return server.ErrBadInvite
		case failed(0):
			return server.ErrExists
		}
		for i := range u.NameKeys {
			if failed(keysAt + i) {
				return server.ErrConfusable
			}
		}
		return err
	})
}

func (s *Store) GetUser(ctx context.Context, id string) (server.User, error) {
	var u server.User
	err := s.do(ctx, "get user", func(ctx context.Context) error {
		if id == "" || isMarker(id) {
			return server.ErrNotFound
		}
		// Strongly consistent: a login right after registering must find the user.
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.users), Key: item{"user_id": sv(id)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if out.Item == nil {
			return server.ErrNotFound
		}
		u = userFrom(out.Item)
		return nil
	})
	return u, err
}

// FirstUser reads the first-account claim item.
func (s *Store) FirstUser(ctx context.Context) (string, error) {
	var id string
	err := s.do(ctx, "first user", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.users), Key: item{"user_id": sv(firstUserKey)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if out.Item == nil {
			return server.ErrNotFound
		}
		id = getS(out.Item, "claimed_by")
		return nil
	})
	return id, err
}

func userFrom(it item) server.User {
	u := server.User{
		ID:           getS(it, "user_id"),
		DisplayName:  getS(it, "display_name"),
		Status:       getS(it, "status"),
		PasswordHash: getB(it, "password_hash"),
		Admin:        getBool(it, "admin"),
		HidePresence: getBool(it, "hide_presence"), // absent on users made before it existed: false
		Disabled:     getBool(it, "disabled"),
		ResetHash:    getS(it, "reset_hash"),
		CreatedAt:    getT(it, "created_at"),
	}
	if _, ok := it["reset_expires"]; ok {
		u.ResetExpires = getT(it, "reset_expires")
	}
	return u
}

// UpdateProfile is one conditional UpdateItem returning the new item.
func nameKeyItem(key string) string { return "#key#" + key }

// ClaimNameKeys is a conditional PutItem per key, and an UpdateItem adding
// the claimed ones to the user's name_keys.
func (s *Store) ClaimNameKeys(ctx context.Context, userID string, keys []string) error {
	var claimed []string
	confusable := false
	err := s.do(ctx, "claim name keys", func(ctx context.Context) error {
		claimed, confusable = claimed[:0], false
		for _, k := range keys {
			_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.t.users),
				Item:                      item{"user_id": sv(nameKeyItem(k)), "owner": sv(userID)},
				ConditionExpression:       aws.String("attribute_not_exists(user_id) OR #o = :me"),
				ExpressionAttributeNames:  map[string]string{"#o": "owner"},
				ExpressionAttributeValues: item{":me": sv(userID)}})
			if isCondFailed(err) {
				confusable = true
				continue
			}
			if err != nil {
				return err
			}
			claimed = append(claimed, k)
		}
		if len(claimed) == 0 {
			return nil
		}
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.users), Key: item{"user_id": sv(userID)},
			UpdateExpression:          aws.String("ADD name_keys :k"),
			ConditionExpression:       aws.String("attribute_exists(user_id)"),
			ExpressionAttributeValues: item{":k": &types.AttributeValueMemberSS{Value: claimed}}})
		if isCondFailed(err) {
			return server.ErrNotFound
		}
		return err
	})
	if err == nil && confusable {
		return server.ErrConfusable
	}
	return err
}

// updateNameKeys is UpdateProfile with new name keys: a read of the keys
// held, then one transaction of the update (on the condition that they are
// still those), a conditional put of each new key and a delete of each
// dropped one.
func (s *Store) updateNameKeys(ctx context.Context, id string, ch server.ProfileChange, sets []string, vals item, names map[string]string) (server.User, error) {
	err := s.do(ctx, "update profile", func(ctx context.Context) error {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.users), Key: item{"user_id": sv(id)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if out.Item == nil || isMarker(id) {
			return server.ErrNotFound
		}
		var old []string
		if v, ok := out.Item["name_keys"].(*types.AttributeValueMemberSS); ok {
			old = v.Value
		}
		upd := &types.Update{TableName: aws.String(s.t.users), Key: item{"user_id": sv(id)},
			ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
		vals[":nk"] = &types.AttributeValueMemberSS{Value: ch.NameKeys}
		expr := "SET " + strings.Join(append(slices.Clone(sets), "name_keys = :nk"), ", ")
		if len(ch.NameKeys) == 0 {
			delete(vals, ":nk")
			expr = "SET " + strings.Join(sets, ", ") + " REMOVE name_keys"
		}
		upd.UpdateExpression = aws.String(expr)
		if len(old) == 0 {
			upd.ConditionExpression = aws.String("attribute_exists(user_id) AND attribute_not_exists(name_keys)")
		} else {
			vals[":old"] = &types.AttributeValueMemberSS{Value: old}
			upd.ConditionExpression = aws.String("attribute_exists(user_id) AND name_keys = :old")
		}
		items := []types.TransactWriteItem{{Update: upd}}
		keysAt := len(items)
		var added []string
		for _, k := range ch.NameKeys {
			if !slices.Contains(old, k) {
				added = append(added, k)
				items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.t.users),
					Item:                      item{"user_id": sv(nameKeyItem(k)), "owner": sv(id)},
					ConditionExpression:       aws.String("attribute_not_exists(user_id) OR #o = :me"),
					ExpressionAttributeNames:  map[string]string{"#o": "owner"},
					ExpressionAttributeValues: item{":me": sv(id)}}})
			}
		}
		for _, k := range old {
			if !slices.Contains(ch.NameKeys, k) {
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.t.users),
					Key:                       item{"user_id": sv(nameKeyItem(k))},
					ConditionExpression:       aws.String("attribute_not_exists(user_id) OR #o = :me"),
					ExpressionAttributeNames:  map[string]string{"#o": "owner"},
					ExpressionAttributeValues: item{":me": sv(id)}}})
			}
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		reasons := cancelReasons(err)
		if reasons == nil {
			return err
		}
		for i := range added {
			if reasons[min(keysAt+i, len(reasons)-1)] == "ConditionalCheckFailed" {
				return server.ErrConfusable
			}
		}
		if reasons[0] == "ConditionalCheckFailed" {
			return server.ErrRaced // renamed meanwhile: the caller may try again
		}
		return err
	})
	if err != nil {
		return server.User{}, err
	}
	return s.GetUser(ctx, id)
}

func (s *Store) UpdateProfile(ctx context.Context, id string, ch server.ProfileChange) (server.User, error) {
	if ch.Empty() {
		return s.GetUser(ctx, id)
	}
	// Every name goes through #name: "status" is a reserved word.
	var sets []string
	vals, names := item{}, map[string]string{}
	set := func(name string, v types.AttributeValue) {
		k := fmt.Sprintf(":v%d", len(vals))
		sets = append(sets, "#"+name+" = "+k)
		vals[k], names["#"+name] = v, name
	}
	if ch.DisplayName != nil {
		set("display_name", sv(*ch.DisplayName))
	}
	if ch.Status != nil {
		set("status", sv(*ch.Status))
	}
	if ch.HidePresence != nil {
		set("hide_presence", bv(*ch.HidePresence))
	}
	if ch.Admin != nil {
		set("admin", bv(*ch.Admin))
	}
	if ch.Disabled != nil {
		set("disabled", bv(*ch.Disabled))
	}
	if ch.PasswordHash != nil {
		set("password_hash", &types.AttributeValueMemberB{Value: ch.PasswordHash})
	}
	if ch.ResetHash != nil {
		set("reset_hash", sv(*ch.ResetHash))
	}
	if ch.ResetExpires != nil {
		set("reset_expires", tv(*ch.ResetExpires))
	}
	if ch.NameKeys != nil {
		return s.updateNameKeys(ctx, id, ch, sets, vals, names)
	}
	var u server.User
	err := s.do(ctx, "update profile", func(ctx context.Context) error {
		if isMarker(id) {
			return server.ErrNotFound
		}
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.t.users),
			Key:                       item{"user_id": sv(id)},
			UpdateExpression:          aws.String("SET " + strings.Join(sets, ", ")),
			ConditionExpression:       aws.String("attribute_exists(user_id)"),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: vals,
			ReturnValues:              types.ReturnValueAllNew,
		})
		if isCondFailed(err) {
			return server.ErrNotFound
		}
		if err != nil {
			return err
		}
		u = userFrom(out.Attributes)
		return nil
	})
	return u, err
}

// scanAll reads a whole table (administration only: see server.AccountStore).
func (s *Store) scanAll(ctx context.Context, op, table string, fn func(item)) error {
	return s.do(ctx, op, func(ctx context.Context) error {
		in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
		for {
			out, err := s.db.Scan(ctx, in)
			if err != nil {
				return err
			}
			for _, it := range out.Items {
				fn(it)
			}
			if len(out.LastEvaluatedKey) == 0 {
				return nil
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	})
}

func (s *Store) ListUsers(ctx context.Context) ([]server.User, error) {
	var out []server.User
	err := s.scanAll(ctx, "list users", s.t.users, func(it item) {
		if !isMarker(getS(it, "user_id")) { // not a marker or a name key
			u := userFrom(it)
			// The keys held: Service.ClaimNameKeys skips the accounts that
			// hold theirs, so a node's start costs this scan, not a write
			// per account.
			if v, ok := it["name_keys"].(*types.AttributeValueMemberSS); ok {
				u.NameKeys = v.Value
			}
			out = append(out, u)
		}
	})
	slices.SortFunc(out, func(a, b server.User) int { return strings.Compare(a.ID, b.ID) })
	return out, err
}

// DeleteUserTokens finds the user's tokens on the index by user (a Query,
// token_index.go), not by a scan of every token.
func (s *Store) DeleteUserTokens(ctx context.Context, userID string) error {
	hashes, err := s.userTokenHashes(ctx, userID)
	if err != nil {
		return fmt.Errorf("delete tokens of %s: %w", userID, err)
	}
	for _, h := range hashes {
		if err := s.DeleteToken(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

// DisableUserTokens finds the user's tokens as DeleteUserTokens does.
func (s *Store) DisableUserTokens(ctx context.Context, userID string) error {
	hashes, err := s.userTokenHashes(ctx, userID)
	if err != nil {
		return fmt.Errorf("disable tokens of %s: %w", userID, err)
	}
	for _, h := range hashes {
		err := s.do(ctx, "disable token", func(ctx context.Context) error {
			// Only a token still there: one deleted meanwhile (a logout) stays gone.
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.t.tokens), Key: item{"hash": sv(h)},
				UpdateExpression: aws.String("SET disabled = :t"), ConditionExpression: aws.String("attribute_exists(#h)"),
				ExpressionAttributeNames: map[string]string{"#h": "hash"}, ExpressionAttributeValues: item{":t": bv(true)}})
			if isCondFailed(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("disable tokens of %s: %w", userID, err)
		}
	}
	return nil
}

func (s *Store) ListInvites(ctx context.Context) ([]server.Invite, error) {
	var out []server.Invite
	now := s.o.Now()
	err := s.scanAll(ctx, "list invites", s.t.invites, func(it item) {
		inv := server.Invite{Hash: getS(it, "hash"), CreatedBy: getS(it, "created_by"), ExpiresAt: getT(it, "expires_at")}
		if inv.ExpiresAt.After(now) {
			out = append(out, inv)
		}
	})
	slices.SortFunc(out, func(a, b server.Invite) int { return b.ExpiresAt.Compare(a.ExpiresAt) })
	return out, err
}

func (s *Store) DeleteInvite(ctx context.Context, hash string) error {
	return s.do(ctx, "delete invite", func(ctx context.Context) error {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.t.invites), Key: item{"hash": sv(hash)},
			ConditionExpression: aws.String("attribute_exists(#h)"), ExpressionAttributeNames: map[string]string{"#h": "hash"}})
		if isCondFailed(err) {
			return server.ErrNotFound
		}
		return err
	})
}

func (s *Store) PutInvite(ctx context.Context, inv server.Invite) error {
	return s.do(ctx, "put invite", func(ctx context.Context) error {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.t.invites), Item: item{
			"hash": sv(inv.Hash), "created_by": sv(inv.CreatedBy), "expires_at": tv(inv.ExpiresAt),
			ttlAttr: nv(inv.ExpiresAt.Unix()),
		}})
		return err
	})
}

func (s *Store) PutToken(ctx context.Context, t server.Token) error {
	return s.do(ctx, "put token", func(ctx context.Context) error {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.t.tokens), Item: item{
			"hash": sv(t.Hash), "user_id": sv(t.UserID), "expires_at": tv(t.ExpiresAt),
			ttlAttr: nv(t.ExpiresAt.Unix()),
		}})
		return err
	})
}

// GetToken checks the expiry itself: DynamoDB's TTL deletes expired items only
// eventually (within days).
func (s *Store) GetToken(ctx context.Context, hash string) (server.Token, error) {
	var t server.Token
	err := s.do(ctx, "get token", func(ctx context.Context) error {
		// Strongly consistent: a token is used right after the login that made it.
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.t.tokens), Key: item{"hash": sv(hash)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		if out.Item == nil {
			return server.ErrNotFound
		}
		t = server.Token{Hash: hash, UserID: getS(out.Item, "user_id"), ExpiresAt: getT(out.Item, "expires_at"), Disabled: getBool(out.Item, "disabled")}
		if !s.o.Now().Before(t.ExpiresAt) {
			t = server.Token{}
			return server.ErrNotFound
		}
		return nil
	})
	return t, err
}

func (s *Store) DeleteToken(ctx context.Context, hash string) error {
	return s.do(ctx, "delete token", func(ctx context.Context) error {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.t.tokens), Key: item{"hash": sv(hash)}})
		return err
	})
}
