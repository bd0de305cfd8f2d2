package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/displayname"
	"github.com/chatterm/chat/wire"
)

// People appear by their display names (internal/displayname): the name
// alone, or with the id beside it when it reads like another known person's
// name or id. Names are asked of the server once per user as the screens
// come to show them (inbox peers, members, senders), and change live with
// client.ProfileEvent.

// profilesMsg: the profiles of users the screens show, as the backend had
// them; asked are the ids the command asked for (failed ones are asked
// again the next time they are shown).
type profilesMsg struct {
	profiles []wire.Profile
	asked    []string
}

// names is the TUI's directory of people, in common.
type names struct {
	dir    displayname.Directory
	asking map[string]bool // asked, answer not in yet
}

// who is how a user appears on screen.
func (c *common) who(userID string) string { return c.names.dir.Show(userID) }

// label is a user with the id always beside the name, as the members list
// shows them: "Alice Liddell (alice)".
func (c *common) label(userID string) string { return c.names.dir.Label(userID) }

// title is convTitle with a direct conversation's peer by name.
func (c *common) title(e wire.InboxEntry) string {
	t := convTitle(e, c.me)
	if e.Type == wire.Group {
		return t
	}
	return c.who(t)
}

// askNames is a command fetching the profiles of those of ids not known and
// not being asked for; nil when there are none.
func (c *common) askNames(ids ...string) tea.Cmd {
	var want []string
	for _, id := range ids {
		if id == "" || c.names.dir.Known(id) || c.names.asking[id] {
			continue
		}
		if c.names.asking == nil {
			c.names.asking = map[string]bool{}
		}
		c.names.asking[id] = true
		want = append(want, id)
	}
	return c.fetchProfiles(want)
}

// fetchProfiles is a command fetching the profiles of want (marked asking
// by the caller); nil when there are none.
func (c *common) fetchProfiles(want []string) tea.Cmd {
	if len(want) == 0 {
		return nil
	}
	be, ctx, timeout := c.be, c.ctx, c.timeout
	return func() tea.Msg {
		var out []wire.Profile
		for _, id := range want {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			p, err := be.Profile(ctx, id)
			cancel()
			switch {
			case err == nil:
				out = append(out, p)
			case wire.ErrorCode(err) == wire.CodeNotFound:
				out = append(out, wire.Profile{UserID: id}) // no such user: the id it is
			}
		}
		return profilesMsg{profiles: out, asked: want}
	}
}

// setProfiles records names; it reports whether how anyone appears changed.
func (c *common) setProfiles(ps []wire.Profile) bool {
	changed := false
	for _, p := range ps {
		if c.names.dir.Set(p.UserID, p.DisplayName) {
			changed = true
		}
	}
	return changed
}

// namesUpdate handles what names.go declares and a live profile change: the
// names are recorded and, when one shows differently, the chat is drawn
// again (its lines' key has the directory's version).
func (m *Model) namesUpdate(msg tea.Msg) {
	var ps []wire.Profile
	switch msg := msg.(type) {
	case profilesMsg:
		for _, id := range msg.asked {
			delete(m.c.names.asking, id)
		}
		ps = msg.profiles
	case client.ProfileEvent:
		ps = []wire.Profile{msg.Profile}
	}
	if m.c.setProfiles(ps) {
		m.chat.render()
	}
}

// inboxNames are the users the inbox rows show: direct peers and the senders
// of the last messages.
func inboxNames(entries []wire.InboxEntry, me string) []string {
	var ids []string
	for _, e := range entries {
		if e.Type != wire.Group {
			ids = append(ids, convTitle(e, me))
		}
		if e.LastMessageSender != "" {
			ids = append(ids, e.LastMessageSender)
		}
	}
	return ids
}
