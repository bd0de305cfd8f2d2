package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/chatterm/chat/wire"
)

// L in the channel browser leaves the joined channel under the cursor, and
// the list shows it no longer joined; on a channel not joined it does
// nothing.
func TestChannelBrowserLeaves(t *testing.T) {
	be := fixture()
	ops := wire.Conversation{ConversationID: "g:ops", Type: wire.Channel, Name: "ops", Topic: "deploys",
		Participants: []wire.Participant{{UserID: "bob", Role: wire.RoleAdmin}}}
	be.channels = []wire.Conversation{be.convs["g:team"], ops}
	be.channels[0].Type = wire.Channel // joined
	h := newHarness(t, be, 100, 30)
	h.key("C")
	h.wantScreen("✓ team")
	h.wantScreen("L leave")

	h.key("j", "L") // ops: not joined
	if len(be.left) != 0 {
		t.Fatalf("L left a channel not joined: %v", be.left)
	}
	h.key("k", "L")
	if !slices.Equal(be.left, []string{"g:team"}) {
		t.Fatalf("left %v, want the team", be.left)
	}
	h.wantScreen("team")
	if s := h.screen(); strings.Contains(s, "✓ team") || strings.Contains(s, "leaving…") {
		t.Fatalf("the team still shows joined after leaving:\n%s", s)
	}
}
