package client

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// Event is something a Session reports to its UI, on Session.Events. The
// concrete types below are the whole set.
type Event interface{ event() }

// MessageEvent: a message new to this device was stored in the cache (someone
// else's, or our own sent from another device).
type MessageEvent struct{ Message wire.Message }

// ChangedEvent: events (reactions, edits, deletes) changed a cached message;
// Message is it as cached now. The events themselves come as MessageEvents
// (Kind set) and are not messages to show.
type ChangedEvent struct{ Message wire.Message }

// SentEvent: the server stored a message from our outbox; it now has a seq_no.
// Message is the stored message as cached.
type SentEvent struct {
	Sent    wire.SendResponse
	Message wire.Message
}

// SendFailedEvent: the server refused an outbox message for good (too large,
// not a member...). It stays in the outbox, marked, and is not resent.
type SendFailedEvent struct {
	ConversationID string
	MessageID      string
	Err            *wire.Error
}

// StatusEvent: a member's delivered/read boundaries moved (ticks, unread).
type StatusEvent struct {
	ConversationID string
	Status         wire.MemberStatus
}

// ConversationEvent: we were added to a conversation, or it changed.
type ConversationEvent struct{ Conversation wire.Conversation }

// InboxEvent: the cached inbox was refreshed from the server (after a
// connect); re-read Session.Inbox.
type InboxEvent struct {
	// Offline: the server answered from its offline copy (its store is
	// out); the inbox shown is the cache's, and may be behind the server's.
	Offline bool
}

// TypingEvent: another member is typing in the conversation (show it for
// TypingShownFor after At, unless a message from them arrives first).
type TypingEvent struct {
	ConversationID string
	UserID         string
	At             time.Time
}

// RestoredEvent: the server's store was restored from a backup or rolled
// back (StoreChanged: its store id changed; else a message came under a
// seq_no this device held another message under), and the cache was brought
// back in step with it: Lost messages (and events) the server no longer has
// are gone from the cache, in Conversations; Resent of them were this
// account's own, acknowledged and then lost, and are in the outbox to be sent
// again. Reported once per reconciliation; Notice says it for a status line.
type RestoredEvent struct {
	StoreChanged  bool
	Conversations []string
	Lost          int
	Resent        int

	requeued []localstore.OutboxEntry // for the session: what to send again
}

// Notice is the one line a UI shows for the event.
func (e RestoredEvent) Notice() string {
	what := "the server was restored from a backup"
	if !e.StoreChanged {
		what = "the server lost messages (restored or rolled back)"
	}
	if e.Lost == 0 {
		return what + "; nothing held here was lost"
	}
	out := fmt.Sprintf("%s: %d %s no longer there removed here", what, e.Lost, plural(e.Lost, "message", "messages"))
	if e.Resent > 0 {
		out += fmt.Sprintf("; %d of yours sent again", e.Resent)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ProfileEvent: a user who shares a conversation with us, or we ourselves,
// changed their display name or status (wire.TypeProfile).
type ProfileEvent struct{ Profile wire.Profile }

// StateEvent: the connection state changed. State events are never queued
// behind a full channel (the newest wins; Session.State is always current).
type StateEvent struct{ State State }

func (MessageEvent) event()      {}
func (SentEvent) event()         {}
func (ChangedEvent) event()      {}
func (SendFailedEvent) event()   {}
func (StatusEvent) event()       {}
func (ConversationEvent) event() {}
func (InboxEvent) event()        {}
func (StateEvent) event()        {}
func (TypingEvent) event()       {}
func (RestoredEvent) event()     {}
func (ProfileEvent) event()      {}
func (StreamPausedEvent) event() {}

// ConnStatus is the state of the connection to the server.
type ConnStatus int

const (
	Connecting   ConnStatus = iota // first dial in progress
	Connected                      // the WebSocket is up
	Reconnecting                   // lost; the next attempt is at RetryAt
	Offline                        // not trying: stopped, or the token was refused
)

func (c ConnStatus) String() string {
	switch c {
	case Connecting:
		return "connecting"
	case Connected:
		return "connected"
	case Reconnecting:
		return "reconnecting"
	case Offline:
		return "offline"
	}
	return fmt.Sprintf("ConnStatus(%d)", int(c))
}

// State is what a status line shows.
type State struct {
	Status  ConnStatus
	RetryAt time.Time // Reconnecting: when the next attempt starts
	Unsent  int       // messages in the outbox still to be sent
	Err     string    // the last connection error
	// LoggedOut is set when the server refused the token: log in again.
	LoggedOut bool
	// Disabled is set with LoggedOut when the refusal was account_disabled:
	// an admin disabled the account, and logging in again will not help.
	Disabled bool
}

// String renders the state for a status line: "connected",
// "reconnecting in 3s (2 unsent)", "offline (1 unsent)".
func (s State) String() string { return s.At(time.Now()) }

// At renders the state as of now.
func (s State) At(now time.Time) string {
	var out string
	switch s.Status {
	case Reconnecting:
		d := s.RetryAt.Sub(now)
		if d < time.Second {
			out = "reconnecting"
		} else {
			out = fmt.Sprintf("reconnecting in %ds", int(d.Round(time.Second)/time.Second))
		}
	case Offline:
		out = "offline"
		if s.LoggedOut {
			out = "logged out: log in again"
		}
		if s.Disabled {
			out = "account disabled: ask your server's admin"
		}
	default:
		out = s.Status.String()
	}
	if s.Unsent > 0 {
		out += fmt.Sprintf(" (%d unsent)", s.Unsent)
	}
	return out
}

// Backoff is the reconnect policy: exponential with full jitter. The
// n-th consecutive failed attempt waits a uniformly random time in
// [0, min(Cap, Base·2ⁿ)); a connection that stayed up for Stable resets n.
type Backoff struct {
	Base   time.Duration // default 250ms
	Cap    time.Duration // default 30s
	Stable time.Duration // default 10s
}

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 250 * time.Millisecond
	}
	if b.Cap <= 0 {
		b.Cap = 30 * time.Second
	}
	if b.Stable <= 0 {
		b.Stable = 10 * time.Second
	}
	return b
}

// Ceiling is the upper bound of the n-th delay: min(Cap, Base·2ⁿ).
func (b Backoff) Ceiling(n int) time.Duration {
	b = b.withDefaults()
	if n >= 62 || b.Base<<n <= 0 || b.Base<<n > b.Cap {
		return b.Cap
	}
	return b.Base << n
}

// Delay draws the n-th delay; rnd returns a float in [0, 1) (nil: math/rand).
func (b Backoff) Delay(n int, rnd func() float64) time.Duration {
	if rnd == nil {
		rnd = rand.Float64
	}
	return time.Duration(rnd() * float64(b.Ceiling(n)))
}
