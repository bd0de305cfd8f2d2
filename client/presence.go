package client

import (
	"context"
	"net/http"

	"github.com/chatterm/chat/wire"
)

// Presence returns whether each other member of the conversation is online
// now, and when offline members were last seen.
func (a *API) Presence(ctx context.Context, conversationID string) (wire.PresenceResponse, error) {
	var out wire.PresenceResponse
	_, err := a.do(ctx, http.MethodGet, convPath(conversationID, "presence"), nil, nil, &out)
	return out, err
}
