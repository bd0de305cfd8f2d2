package inmem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.InboxIndex = (*InboxIndex)(nil)

// DefaultInboxSize is how many conversations InboxIndex keeps per user by default.
const DefaultInboxSize = 1000

// InboxIndex keeps each warm user's conversations with their last activity time.
// A user is warm from Fill on; Touch of a cold user does nothing, so memory only
// goes to users who opened their inbox since the process started.
//
// Each user keeps at most maxPerUser conversations: beyond that the least recent
// is dropped, and Top asking for more than what is kept of a trimmed inbox reports
// ErrCold, so the caller reads the full list from the store. An inbox nobody
// filled or read for DefaultInboxIdle goes cold again (as the Redis one expires),
// so memory follows the users active lately, not every user ever seen.
type InboxIndex struct {
	max    int
	idle   int64 // nanoseconds
	now    func() time.Time
	shards [nShards]inboxShard
}

type inboxShard struct {
	mu      sync.Mutex
	users   map[string]*userInbox
	sweptAt int64
	_       [32]byte
}

type userInbox struct {
	convs   map[string]int64 // conversation id → last activity, unix millis
	trimmed bool             // some conversations were dropped to respect max
	used    int64            // last Fill or Top, unix nanos
}

// DefaultInboxIdle is how long an unread inbox stays warm.
const DefaultInboxIdle = 24 * time.Hour

// NewInboxIndex returns an InboxIndex keeping up to maxPerUser conversations per
// user (0: DefaultInboxSize).
func NewInboxIndex(maxPerUser int) *InboxIndex {
	if maxPerUser <= 0 {
		maxPerUser = DefaultInboxSize
	}
	return &InboxIndex{max: maxPerUser, idle: int64(DefaultInboxIdle), now: time.Now}
}

// SetIdle changes how long an unread inbox stays warm and the clock that measures
// it; call it before use.
func (x *InboxIndex) SetIdle(idle time.Duration, now func() time.Time) {
	x.idle, x.now = int64(idle), now
}

// sweep drops the shard's idle inboxes, at most once per idle period / 4, so its
// cost is spread thin. Called with sh.mu held.
func (x *InboxIndex) sweep(sh *inboxShard, now int64) {
	if now-sh.sweptAt < x.idle/4 {
		return
	}
	for id, in := range sh.users {
		if now-in.used >= x.idle {
			delete(sh.users, id)
		}
	}
	sh.sweptAt = now
}

// activity is the time an inbox entry sorts by: its last message, or its creation
// when it has none yet.
func activity(c server.Conversation) int64 {
	if !c.LastMessageAt.IsZero() {
		return c.LastMessageAt.UnixMicro()
	}
	return c.CreatedAt.UnixMicro()
}

// Touch moves convID to at in every warm inbox of userIDs. Times only move
// forward: a late Touch with an older time (two sends finishing out of order)
// does not push the conversation down.
func (x *InboxIndex) Touch(_ context.Context, userIDs []string, convID string, at time.Time) error {
	if convID == "" {
		return fmt.Errorf("inbox touch: %w", errEmpty)
	}
	us := at.UnixMicro() // microseconds: same-millisecond activity still orders
	for _, u := range userIDs {
		sh := &x.shards[shardOf(u)]
		sh.mu.Lock()
		if in := sh.users[u]; in != nil {
			if old, ok := in.convs[convID]; !ok || us > old {
				in.convs[convID] = us
			}
			if len(in.convs) > x.max {
				x.trim(in)
			}
		}
		sh.mu.Unlock()
	}
	return nil
}

// trim drops the least recent conversations beyond max. Touch adds at most one, so
// usually one scan of the map finds the one to drop; Fill may need a sort.
func (x *InboxIndex) trim(in *userInbox) {
	switch over := len(in.convs) - x.max; {
	case over <= 0:
		return
	case over == 1:
		var oldest inboxItem
		first := true
		for id, us := range in.convs {
			if it := (inboxItem{id, us}); first || byRecent(it, oldest) > 0 {
				oldest, first = it, false
			}
		}
		delete(in.convs, oldest.id)
	default:
		items := make([]inboxItem, 0, len(in.convs))
		for id, us := range in.convs {
			items = append(items, inboxItem{id, us})
		}
		slices.SortFunc(items, byRecent)
		for _, it := range items[x.max:] {
			delete(in.convs, it.id)
		}
	}
	in.trimmed = true
}

type inboxItem struct {
	id string
	us int64
}

// byRecent orders most recent first; ties by id descending, as Redis ZREVRANGE does.
func byRecent(a, b inboxItem) int {
	if c := cmp.Compare(b.us, a.us); c != 0 {
		return c
	}
	return cmp.Compare(b.id, a.id)
}

// Top returns up to limit conversation ids, most recent first, or ErrCold.
func (x *InboxIndex) Top(_ context.Context, userID string, limit int) ([]string, error) {
	if limit < 1 {
		return nil, fmt.Errorf("inbox top: limit %d must be at least 1", limit)
	}
	now := x.now().UnixNano()
	sh := &x.shards[shardOf(userID)]
	sh.mu.Lock()
	in := sh.users[userID]
	if in != nil && now-in.used >= x.idle {
		delete(sh.users, userID)
		in = nil
	}
	if in == nil || (in.trimmed && limit > len(in.convs)) {
		sh.mu.Unlock()
		return nil, server.ErrCold
	}
	in.used = now
	items := make([]inboxItem, 0, len(in.convs))
	for id, us := range in.convs {
		items = append(items, inboxItem{id, us})
	}
	sh.mu.Unlock()
	slices.SortFunc(items, byRecent)
	ids := make([]string, 0, min(limit, len(items)))
	for _, it := range items[:min(limit, len(items))] {
		ids = append(ids, it.id)
	}
	return ids, nil
}

// Fill replaces the user's inbox with entries and marks it warm.
func (x *InboxIndex) Fill(_ context.Context, userID string, entries []server.InboxEntry) error {
	if userID == "" {
		return fmt.Errorf("inbox fill: %w", errEmpty)
	}
	in := &userInbox{convs: make(map[string]int64, min(len(entries), x.max+1))}
	for _, e := range entries {
		if e.Conversation.ID == "" {
			return fmt.Errorf("inbox fill %s: entry with %w", userID, errEmpty)
		}
		in.convs[e.Conversation.ID] = max(in.convs[e.Conversation.ID], activity(e.Conversation))
	}
	x.trim(in)
	now := x.now().UnixNano()
	in.used = now
	sh := &x.shards[shardOf(userID)]
	sh.mu.Lock()
	if sh.users == nil {
		sh.users = make(map[string]*userInbox)
		sh.sweptAt = now
	}
	sh.users[userID] = in
	x.sweep(sh, now)
	sh.mu.Unlock()
	return nil
}

// Forget drops convID from the user's inbox; a cold user is left cold.
func (x *InboxIndex) Forget(_ context.Context, userID, convID string) error {
	sh := &x.shards[shardOf(userID)]
	sh.mu.Lock()
	if in := sh.users[userID]; in != nil {
		delete(in.convs, convID)
	}
	sh.mu.Unlock()
	return nil
}
