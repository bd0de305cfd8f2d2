package client

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/chatterm/chat/wire"
)

// Presence returns whether each other member of the conversation is online
// now, and when offline members were last seen.
func (a *API) Presence(ctx context.Context, conversationID string) (wire.PresenceResponse, error) {
	var out wire.PresenceResponse
	_, err := a.do(ctx, http.MethodGet, convPath(conversationID, "presence"), nil, nil, &out)
	return out, err
}

// PresenceWords says a member's presence as a person would: "online", "last
// seen just now", "last seen 14:02" (today), "last seen mon 09:15" (this
// week), "last seen 2026-11-03"; "" when hidden or never seen. Times are
// shown in now's location.
func PresenceWords(p wire.MemberPresence, now time.Time) string {
	switch {
	case p.Hidden:
		return ""
	case p.Online:
		return "online"
	case p.LastSeen.IsZero():
		return ""
	}
	at := p.LastSeen.In(now.Location())
	y, mo, d := now.Date()
	switch ay, amo, ad := at.Date(); {
	case now.Sub(at) < time.Minute:
		return "last seen just now"
	case ay == y && amo == mo && ad == d:
		return "last seen " + at.Format("15:04")
	case now.Sub(at) < 6*24*time.Hour:
		return "last seen " + strings.ToLower(at.Format("Mon")) + " " + at.Format("15:04")
	}
	return "last seen " + at.Format("2006-01-02")
}
