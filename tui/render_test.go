package tui

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Drawing only what is new gives the lines a full redraw gives: live
// messages from two senders across a day change, a run of one sender, an
// event, the unread marker and a selection in place.
func TestAppendedLinesMatchAFullRedraw(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob: opens at the unread marker
	bob := wire.DirectConversationID("alice", "bob")
	at := fixtureNow.Add(-time.Minute)
	for i := range 12 {
		sender := []string{"bob", "bob", "carol_with_a_long_name", "alice"}[i%4]
		m := wire.Message{ConversationID: bob, SeqNo: int64(8 + i), MessageID: fmt.Sprintf("live%d", i), SenderID: sender,
			Content: fmt.Sprintf("live message %d, long enough to wrap when the window is narrow enough for it to", i), Timestamp: at.Add(time.Duration(i) * 3 * time.Minute)}
		if i == 5 {
			m.Kind, m.TargetSeq, m.Content = wire.KindReaction, 3, "👍"
		}
		h.send(client.MessageEvent{Message: m})
		c := h.root().chat
		incremental := slices.Clone(c.lines)
		c.drawn = drawnState{}
		c.render()
		if !slices.Equal(incremental, c.lines) {
			t.Fatalf("after live message %d the appended lines differ from a full redraw:\n%q\n%q", i, incremental, c.lines)
		}
	}
}
