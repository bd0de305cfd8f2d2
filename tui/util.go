package tui

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
	"unicode"
)

func matches(msg tea.KeyPressMsg, b key.Binding) bool { return key.Matches(msg, b) }

func asWire(err error, target **wire.Error) bool { return errors.As(err, target) }

type helpKV struct{ key, desc string }

func kv(bs ...key.Binding) []helpKV {
	out := make([]helpKV, len(bs))
	for i, b := range bs {
		out[i] = helpKV{b.Help().Key, b.Help().Desc}
	}
	return out
}

// sameDay reports whether a and b fall on the same calendar day in loc.
func sameDay(a, b time.Time, loc *time.Location) bool {
	a, b = a.In(loc), b.In(loc)
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

// shortWhen labels a time for the inbox: the time today, "Yesterday", the weekday
// within a week, else the date.
func shortWhen(t, now time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	t, now = t.In(loc), now.In(loc)
	switch {
	case sameDay(t, now, loc):
		return t.Format("15:04")
	case sameDay(t, now.AddDate(0, 0, -1), loc):
		return "Yesterday"
	case now.Sub(t) < 6*24*time.Hour && t.Before(now):
		return t.Format("Monday")
	case t.Year() == now.Year():
		return t.Format("2 Jan")
	default:
		return t.Format("2 Jan 2006")
	}
}

// dayLabel labels a day separator in a chat.
func dayLabel(t, now time.Time, loc *time.Location) string {
	t, now = t.In(loc), now.In(loc)
	switch {
	case sameDay(t, now, loc):
		return "Today"
	case sameDay(t, now.AddDate(0, 0, -1), loc):
		return "Yesterday"
	case t.Year() == now.Year():
		return t.Format("Monday, 2 January")
	default:
		return t.Format("Monday, 2 January 2006")
	}
}

// convTitle is how a conversation is named on screen: a group's name, or the
// other member of a direct conversation.
func convTitle(e wire.InboxEntry, me string) string {
	if wire.IsGroupType(e.Type) {
		if e.Name != "" {
			return termtext.Clean(e.Name, false)
		}
		return e.ConversationID
	}
	if e.Peer != "" {
		return e.Peer
	}
	if a, b, ok := wire.DirectMembers(e.ConversationID); ok {
		if a == me {
			return b
		}
		return a
	}
	if e.Name != "" {
		return termtext.Clean(e.Name, false)
	}
	return e.ConversationID
}

// entryFromConversation makes an inbox row for a conversation just created or
// opened.
func entryFromConversation(c wire.Conversation, me string) wire.InboxEntry {
	e := wire.InboxEntry{
		ConversationID: c.ConversationID, Type: c.Type, Name: c.Name, LastSeq: c.LastSeq,
		LastMessageBody: c.LastMessageBody, LastMessageSender: c.LastMessageSender,
		LastMessageAt: c.LastMessageAt,
	}
	if e.LastMessageAt.IsZero() {
		e.LastMessageAt = c.CreatedAt
	}
	if c.Type == wire.Direct {
		for _, p := range c.Participants {
			if p.UserID != me {
				e.Peer = p.UserID
			}
		}
		if e.Peer == "" {
			e.Peer = convTitle(e, me)
		}
	}
	return e
}

// splitMembers reads "bob, carol dave" into user ids.
func splitMembers(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ',' || r == ';' || unicode.IsSpace(r)
	})
	seen := map[string]bool{}
	var out []string
	for _, id := range f {
		id = strings.TrimPrefix(id, "@")
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// plural spells a count with its noun: "1 draft", "2 drafts".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
