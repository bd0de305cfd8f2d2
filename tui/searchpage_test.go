package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// The search box shows the newest page of hits; moving down to the last one
// asks for the next page, until every hit has been listed once, in order.
func TestSearchResultsPaged(t *testing.T) {
	be := fixture()
	bob := wire.DirectConversationID("alice", "bob")
	const n = 130
	var ms []wire.Message
	for i := 1; i <= n; i++ {
		ms = append(ms, wire.Message{ConversationID: bob, SeqNo: int64(i), MessageID: fmt.Sprintf("x%d", i), SenderID: "bob",
			Content: fmt.Sprintf("invoice %d", i), Timestamp: fixtureNow.Add(time.Duration(i-n) * time.Minute)})
	}
	be.msgs[bob] = ms
	h := newHarness(t, be, 90, 30)
	h.key("/")
	h.typeText("invoice")
	if got := len(h.root().search.hits); got != searchLimit {
		t.Fatalf("%d hits shown at first, want a page of %d", got, searchLimit)
	}
	for range n + 5 {
		h.key("down")
	}
	s := h.root().search
	if len(s.hits) != n || s.more {
		t.Fatalf("%d hits after moving down past them all (more %v), want all %d", len(s.hits), s.more, n)
	}
	for i, hit := range s.hits {
		if want := int64(n - i); hit.Message.SeqNo != want {
			t.Fatalf("hit %d is message %d, want %d: the pages overlap or skip", i, hit.Message.SeqNo, want)
		}
	}
	if s.cursor != n-1 {
		t.Fatalf("cursor at %d, want the last hit %d", s.cursor, n-1)
	}
}
