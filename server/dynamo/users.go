package dynamo

import (
	"context"
	"fmt"

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
		return err
	})
}

func (s *Store) GetUser(ctx context.Context, id string) (server.User, error) {
	var u server.User
	err := s.do(ctx, "get user", func(ctx context.Context) error {
		if id == "" || id == firstUserKey {
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
	return server.User{
		ID:           getS(it, "user_id"),
		DisplayName:  getS(it, "display_name"),
		Status:       getS(it, "status"),
		PasswordHash: getB(it, "password_hash"),
		Admin:        getBool(it, "admin"),
		HidePresence: getBool(it, "hide_presence"), // absent on users made before it existed: false
		CreatedAt:    getT(it, "created_at"),
	}
}

// UpdateProfile is one conditional UpdateItem returning the new item.
func (s *Store) UpdateProfile(ctx context.Context, id string, ch server.ProfileChange) (server.User, error) {
	displayName, status := ch.DisplayName, ch.Status
	if displayName == nil && status == nil && ch.HidePresence == nil {
		return s.GetUser(ctx, id)
	}
	var u server.User
	err := s.do(ctx, "update profile", func(ctx context.Context) error {
		if id == firstUserKey {
			return server.ErrNotFound
		}
		expr, vals := "SET", item{}
		if displayName != nil {
			expr += " display_name = :n"
			vals[":n"] = sv(*displayName)
		}
		if status != nil {
			if displayName != nil {
				expr += ","
			}
			expr += " #st = :s"
			vals[":s"] = sv(*status)
		}
		if ch.HidePresence != nil {
			if len(vals) > 0 {
				expr += ","
			}
			expr += " hide_presence = :h"
			vals[":h"] = bv(*ch.HidePresence)
		}
		in := &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.t.users),
			Key:                       item{"user_id": sv(id)},
			UpdateExpression:          aws.String(expr),
			ConditionExpression:       aws.String("attribute_exists(user_id)"),
			ExpressionAttributeValues: vals,
			ReturnValues:              types.ReturnValueAllNew,
		}
		if status != nil {
			in.ExpressionAttributeNames = map[string]string{"#st": "status"} // a reserved word
		}
		out, err := s.db.UpdateItem(ctx, in)
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
		t = server.Token{Hash: hash, UserID: getS(out.Item, "user_id"), ExpiresAt: getT(out.Item, "expires_at")}
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
