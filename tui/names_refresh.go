package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
)

// A profile frame is best effort: one sent while the client was
// reconnecting is lost, and the name it carried was shown only after a
// restart. A reconnect asks the known names again (docs/protocol.md,
// "profile").

// maxNamesRefresh bounds the profiles one reconnect asks for, one request
// each: a reconnect after a server restart is every client's at once.
const maxNamesRefresh = 100

// refreshNamesOnReconnect is the command asking again the profiles of the
// people the screens have shown, when the connection comes back after it
// was lost (not at the first connect: nothing was missed before it); nil
// otherwise.
func (m *Model) refreshNamesOnReconnect(before, now client.State) tea.Cmd {
	if now.Status != client.Connected || (before.Status != client.Reconnecting && before.Status != client.Offline) {
		return nil
	}
	ids := m.c.names.dir.UserIDs()
	slices.Sort(ids)
	var want []string
	for _, id := range ids {
		if len(want) == maxNamesRefresh {
			break
		}
		if m.c.names.asking[id] {
			continue // an answer is on its way
		}
		if m.c.names.asking == nil {
			m.c.names.asking = map[string]bool{}
		}
		m.c.names.asking[id] = true
		want = append(want, id)
	}
	// Shown as they were until the answers come: a name that changed
	// meanwhile changes then, as a profile frame would have changed it.
	return m.c.fetchProfiles(want)
}
