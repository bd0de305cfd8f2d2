package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// BenchmarkChatRender measures rebuilding a chat's lines (after any change:
// a tick, a message) with 5,000 messages loaded.
func BenchmarkChatRender(b *testing.B) {
	be := fixture()
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC})
	c := &m.chat
	c.width, c.height = 100, 40
	c.conv = wire.InboxEntry{ConversationID: bobConv, Type: wire.Direct}
	c.loaded = true
	for i := range 5000 {
		sender := "bob"
		if i%2 == 0 {
			sender = "alice"
		}
		c.msgs = append(c.msgs, wire.Message{ConversationID: bobConv, SeqNo: int64(i + 1), MessageID: fmt.Sprint(i), SenderID: sender,
			Content: "a line of chat that is long enough to wrap once the window is narrow, as chat lines often are", Timestamp: fixtureNow.Add(time.Duration(i-5000) * time.Minute)})
	}
	b.ResetTimer()
	for b.Loop() {
		c.render()
	}
}
