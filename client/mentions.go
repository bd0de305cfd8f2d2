package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chatterm/chat/wire"
)

// Mentions returns up to limit messages mentioning the user (0: the server's
// default), newest first: after the cursor (the Next of the page before),
// or sent before before, or (neither given) from the newest.
func (a *API) Mentions(ctx context.Context, cursor string, before time.Time, limit int) (wire.MentionsResponse, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if !before.IsZero() {
		q.Set("before", before.UTC().Format(time.RFC3339Nano))
	}
	var out wire.MentionsResponse
	err := waitOutHints(ctx, func() error {
		_, err := a.do(ctx, http.MethodGet, "/v1/mentions", q, nil, &out)
		return err
	})
	return out, err
}

// MentionSetting returns a group's rule for @all and @here.
func (a *API) MentionSetting(ctx context.Context, conversationID string) (wire.MentionSetting, error) {
	var out wire.MentionSetting
	_, err := a.do(ctx, http.MethodGet, convPath(conversationID, "mentions"), nil, nil, &out)
	return out, err
}

// SetMentionSetting changes a group's rule for @all and @here (group admins).
func (a *API) SetMentionSetting(ctx context.Context, conversationID string, set wire.MentionSetting) (wire.MentionSetting, error) {
	var out wire.MentionSetting
	_, err := a.do(ctx, http.MethodPut, convPath(conversationID, "mentions"), nil, set, &out)
	return out, err
}
