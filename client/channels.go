package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/chatterm/chat/wire"
)

// Channels lists a page of the server's public channels with ids above
// after (GET /v1/channels); limit 0 takes the server's page size.
func (a *API) Channels(ctx context.Context, after string, limit int) (wire.ChannelsResponse, error) {
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out wire.ChannelsResponse
	_, err := a.do(ctx, http.MethodGet, "/v1/channels", q, nil, &out)
	return out, err
}

// AllChannels lists every channel, page after page.
func (a *API) AllChannels(ctx context.Context) ([]wire.ChannelInfo, error) {
	var out []wire.ChannelInfo
	after := ""
	for {
		page, err := a.Channels(ctx, after, 0)
		if err != nil {
			return out, err
		}
		out = append(out, page.Channels...)
		if page.Next == "" {
			return out, nil
		}
		after = page.Next
	}
}

// JoinChannel makes the caller a member of a channel (POST .../join).
func (a *API) JoinChannel(ctx context.Context, id string) (wire.Conversation, error) {
	var out wire.Conversation
	_, err := a.do(ctx, http.MethodPost, convPath(id, "join"), nil, nil, &out)
	return out, err
}

// ChangeConversation renames a group or channel or sets its topic (admins).
func (a *API) ChangeConversation(ctx context.Context, id string, change wire.ConversationChange) (wire.Conversation, error) {
	var out wire.Conversation
	_, err := a.do(ctx, http.MethodPatch, convPath(id), nil, change, &out)
	return out, err
}

// SetRole makes a member admin (wire.RoleAdmin) or takes it back
// (wire.RoleMember).
func (a *API) SetRole(ctx context.Context, id, userID, role string) (wire.Conversation, error) {
	var out wire.Conversation
	_, err := a.do(ctx, http.MethodPut, convPath(id, "members", url.PathEscape(userID), "role"), nil, wire.RoleRequest{Role: role}, &out)
	return out, err
}

// JoinChannel joins a channel and caches it with its members, so it is in
// the inbox before the first message.
func (s *Session) JoinChannel(ctx context.Context, id string) (wire.Conversation, error) {
	c, err := s.api.JoinChannel(ctx, id)
	if err != nil {
		return c, err
	}
	return c, s.store.PutConversation(ctx, c)
}
