package main

import (
	"context"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/displayname"
	"github.com/chatterm/chat/wire"
)

// nameWait bounds the server's answer for one profile: a line prints with
// the bare user id rather than hold up the lines after it.
const nameWait = 3 * time.Second

// namer gives the label a user appears by in the terminal.
type namer func(userID string) string

// label is how a user appears when who is nil: their id.
func (who namer) label(userID string) string {
	if who == nil {
		return userID
	}
	return who(userID)
}

// cachedNames labels users by their display names, "Alice Liddell (alice)",
// asking the server (GET /v1/users/{id}) once per user per run, so a page of
// a thousand messages costs one request per sender, not per message. The id
// always stays beside the name: display names are chosen by their users and
// are not unique, the id is. A user whose name is their id, who is unknown,
// or whom the server cannot be asked about (offline: chat search) appears by
// the id alone; after one failure to reach the server, nobody else is asked.
// A name is another user's text: it reaches the terminal only through the
// sanitiser, on one line.
func cachedNames(ctx context.Context, api *client.API) namer {
	if api == nil {
		return nil
	}
	return newNameCache(ctx, api).label
}

// nameCache is cachedNames' memory, for a command that also hears of
// profile changes while it runs (chat tail: learn).
type nameCache struct {
	ctx         context.Context
	api         *client.API
	known       map[string]string // label by user id
	stale       map[string]bool   // known, to be asked again (askAgain)
	unreachable bool
}

func newNameCache(ctx context.Context, api *client.API) *nameCache {
	return &nameCache{ctx: ctx, api: api, known: map[string]string{}}
}

// label is cachedNames' namer.
func (c *nameCache) label(userID string) string {
	l, ok := c.known[userID]
	if ok && !c.stale[userID] {
		return l
	}
	if !ok {
		l = userID
	}
	if c.unreachable {
		return l
	}
	delete(c.stale, userID)
	qctx, cancel := context.WithTimeout(c.ctx, nameWait)
	p, err := c.api.User(qctx, userID)
	cancel()
	switch {
	case err == nil:
		c.known[userID] = nameLabel(userID, p.DisplayName)
	case wire.ErrorCode(err) == wire.CodeNotFound:
		c.known[userID] = userID // no such user (any more): no name to show
	default:
		// Down, slow, rate limited or logged out: the rest of the run (until
		// a reconnect, askAgain) shows what it knows, ids for the others,
		// rather than wait on each sender in turn.
		c.unreachable = true
		return l
	}
	return c.known[userID]
}

// learn records a profile the server pushed (client.ProfileEvent): the
// lines after it show the name as it now is, without asking.
func (c *nameCache) learn(p wire.Profile) {
	c.known[p.UserID] = nameLabel(p.UserID, p.DisplayName)
}

// nameLabel is "name (id)", or the id alone when the name adds nothing:
// the rule the TUI shares (internal/displayname).
func nameLabel(userID, displayName string) string { return displayname.Label(userID, displayName) }
