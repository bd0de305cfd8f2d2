package server

import (
	"context"
	"time"

	"github.com/chatterm/chat/wire"
)

// UserLimits are per-user limits, per second, on the requests other than
// sends that cost the store a read or a write (docs/security.md). Without
// them one user reached 771 history pages, 1,850 inbox loads or 2,099
// profile updates a second on 8 connections, and another member's send p50
// went from 2.5 to 21 ms. 0 takes the default; <0 turns a limit off. With
// Config.SendRate < 0 (tests, benchmarks) the ones left at 0 are off too.
//
// The defaults are well above what the clients do: the TUI asks for one
// history page when a chat opens and one per page scrolled up, and jumping
// to an old message asks for pages one after another, waiting out a retry
// hint (client.API.History); `chat fetch` fills a conversation the same way.
type UserLimits struct {
	History       int // history pages; default 30 (3,000 messages at the largest page)
	Inbox         int // inbox loads; default 5 (a client loads it once a connection)
	ProfileWrites int // display name, status, presence changes; default 2
	Conversations int // direct conversations created (finding an existing one is free); default 5
	MemberAdds    int // calls adding members to a group; default 5
}

// Default per-user limits; see UserLimits.
var DefaultUserLimits = UserLimits{History: 30, Inbox: 5, ProfileWrites: 2, Conversations: 5, MemberAdds: 5}

func (l *UserLimits) setDefaults(off bool) {
	set := func(p *int, def int) {
		if *p == 0 {
			*p = def
			if off {
				*p = -1
			}
		}
	}
	d := DefaultUserLimits
	set(&l.History, d.History)
	set(&l.Inbox, d.Inbox)
	set(&l.ProfileWrites, d.ProfileWrites)
	set(&l.Conversations, d.Conversations)
	set(&l.MemberAdds, d.MemberAdds)
}

// allow counts one request of kind by userID against perSecond (<0: no
// limit), answered as the send limit is: rate_limited with a retry hint. The
// limiter fails open, as for sends: a Redis that cannot count refuses nobody.
func (s *Service) allow(ctx context.Context, kind, userID string, perSecond int) error {
	if perSecond < 0 {
		return nil
	}
	ok, retry, err := s.cfg.Rate.Allow(ctx, kind+":"+userID, perSecond)
	if err != nil {
		s.metrics.Fallbacks.WithLabelValues("rate_limit").Inc()
		return nil
	}
	if !ok {
		return &wire.Error{Code: wire.CodeRateLimited, Message: "too many " + kind + " requests; retry after the hint", RetryAfterMs: retryAfterMs(retry)}
	}
	return nil
}

// AllowSync counts a WebSocket sync of cursors conversations against the
// user's history limit, the one HTTP history pages count against: a sync is
// the same store read. It costs a history page per wire.MaxPageSize cursors
// up front (each cursor is a store query, even an empty one), and those
// pages cover as many messages; it says how many pages it took. A sync that
// sends more takes a page per wire.MaxPageSize more messages before reading
// them (TakeHistoryPage). Refused, it is answered as the send limit is.
func (s *Service) AllowSync(ctx context.Context, userID string, cursors int) (pages int, err error) {
	pages = pagesOf(cursors)
	if s.cfg.Limits.History >= 0 {
		pages = min(pages, s.cfg.Limits.History)
	}
	return pages, s.allowN(ctx, "history", userID, pages, s.cfg.Limits.History)
}

// TakeHistoryPage takes one more history page from the user's limit for a
// sync that has sent what the pages it took cover and has more to read;
// refused, the sync ends there with more set, and its next round waits for
// AllowSync's hint (server/protocol, syncQuota).
func (s *Service) TakeHistoryPage(ctx context.Context, userID string) error {
	return s.allowN(ctx, "history", userID, 1, s.cfg.Limits.History)
}

// pagesOf is how many history pages n items make (at least one).
func pagesOf(n int) int { return max(1, (n+wire.MaxPageSize-1)/wire.MaxPageSize) }

// allowN is allow for a request that costs n; a cost above the limit is
// capped at it, so a large request waits for a whole window rather than
// never passing.
func (s *Service) allowN(ctx context.Context, kind, userID string, n, perSecond int) error {
	if perSecond < 0 {
		return nil
	}
	n = min(n, perSecond)
	got, retry, err := s.cfg.Rate.AllowN(ctx, kind+":"+userID, n, perSecond)
	if err != nil {
		s.metrics.Fallbacks.WithLabelValues("rate_limit").Inc()
		return nil
	}
	if got < n {
		return &wire.Error{Code: wire.CodeRateLimited, Message: "too many " + kind + " requests; retry after the hint", RetryAfterMs: retryAfterMs(retry)}
	}
	return nil
}

// retryAfterMs is a retry hint in whole milliseconds, rounded up (at least
// one): rounded down, a client that waited the hint came back a fraction of
// a millisecond before the window ended and was refused again.
func retryAfterMs(d time.Duration) int64 {
	return max(int64((d+time.Millisecond-1)/time.Millisecond), 1)
}
