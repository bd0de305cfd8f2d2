package localstore

import (
	"strings"

	"github.com/chatterm/chat/wire"
)

// A membership event's users (wire.Message.Members) are cached in its row's
// content, separated by spaces (user ids have none), as the server keeps
// them: the event needs no column that no other row has, and a cache made
// before protocol 3 reads the same.

// cachedContent is what m's content column holds.
func cachedContent(m wire.Message) string {
	if len(m.Members) > 0 && wire.IsMembershipKind(m.Kind) {
		return strings.Join(m.Members, " ")
	}
	return m.Content
}

// fromCachedContent gives a membership event read back its users again.
func fromCachedContent(m *wire.Message) {
	switch m.Kind {
	case wire.KindAdded, wire.KindRemoved, wire.KindAdminGranted, wire.KindAdminRevoked:
		m.Members, m.Content = strings.Fields(m.Content), ""
	}
}
