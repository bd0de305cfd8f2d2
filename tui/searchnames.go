package tui

import (
	"strings"

	"github.com/chatterm/chat/internal/searchwords"
	"github.com/chatterm/chat/wire"
)

// hitText is what a hit shows under its head: its snippet, but a
// membership line drawn again as the chat draws it, with names ("you
// added Carol Dylan"). The cache indexes and snips that line with user ids
// (it knows no names), so the query's words are marked again: a name where
// its user's id matched, and any other word that matches.
func (m searchModel) hitText(h SearchHit) string {
	if !wire.IsMembershipKind(h.Message.Kind) {
		return h.Snippet
	}
	terms := searchwords.Terms(m.input.Value())
	line := h.Message.MembershipLine(func(id string) string {
		name := m.c.who(id)
		if id == m.c.me {
			name = "you"
		}
		for _, w := range searchwords.Words(id) {
			if searchwords.Match(id[w.Start:w.End], terms) {
				return SnippetStart + name + SnippetEnd
			}
		}
		return name
	})
	return markMatches(line, terms)
}

// markMatches marks the words of text that match terms, outside the parts
// marked already.
func markMatches(text string, terms []string) string {
	var b strings.Builder
	for i, part := range strings.Split(text, SnippetStart) {
		marked, rest, found := strings.Cut(part, SnippetEnd)
		if i == 0 || !found {
			marked, rest = "", part
		}
		if marked != "" {
			b.WriteString(SnippetStart + marked + SnippetEnd)
		}
		pos := 0
		for _, w := range searchwords.Words(rest) {
			if searchwords.Match(rest[w.Start:w.End], terms) {
				b.WriteString(rest[pos:w.Start] + SnippetStart + rest[w.Start:w.End] + SnippetEnd)
				pos = w.End
			}
		}
		b.WriteString(rest[pos:])
	}
	return b.String()
}

// hitNames are the users the hits' heads and membership lines name, to be
// asked for: one removed from a group may be no member the TUI knows.
func hitNames(hits []SearchHit) []string {
	var ids []string
	for _, h := range hits {
		ids = appendNew(ids, h.Message.SenderID)
		ids = appendNew(ids, h.Message.Members...)
	}
	return ids
}
