package client

import (
	"cmp"
	"slices"
)

// ReactionGroup is one emoji on a message and the members who chose it.
type ReactionGroup struct {
	Emoji string
	Users []string // sorted
}

// GroupReactions turns a message's reactions (user → emoji) into groups, the
// most chosen emoji first (then by emoji, so the order is stable), for the
// TUI and the command line to show alike.
func GroupReactions(reactions map[string]string) []ReactionGroup {
	by := map[string][]string{}
	for user, emoji := range reactions {
		by[emoji] = append(by[emoji], user)
	}
	out := make([]ReactionGroup, 0, len(by))
	for emoji, users := range by {
		slices.Sort(users)
		out = append(out, ReactionGroup{Emoji: emoji, Users: users})
	}
	slices.SortFunc(out, func(a, b ReactionGroup) int {
		return cmp.Or(cmp.Compare(len(b.Users), len(a.Users)), cmp.Compare(a.Emoji, b.Emoji))
	})
	return out
}
