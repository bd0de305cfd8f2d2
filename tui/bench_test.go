package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
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

// BenchmarkLiveMessage measures one incoming message in the open chat (with
// 300 loaded) through the root model: Update and View, as each frame does.
func BenchmarkLiveMessage(b *testing.B) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.addMessages(long, []string{"dave", "alice"}, 300, fixtureNow.Add(-time.Hour), func(i int) string {
		return fmt.Sprintf("message %d with a few words in it", i)
	})
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 300, LastMessageAt: fixtureNow})
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, PageSize: 100})
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	tm, _ = tm.Update(openConversationMsg{entry: be.inbox[len(be.inbox)-1]})
	p, _ := be.History(context.Background(), long, 0, 300)
	tm, _ = tm.Update(historyMsg{conv: long, page: p})
	seq := int64(300)
	b.ResetTimer()
	for b.Loop() {
		seq++
		tm, _ = tm.Update(client.MessageEvent{Message: wire.Message{ConversationID: long, SeqNo: seq, MessageID: fmt.Sprint(seq),
			SenderID: "dave", Content: "another one", Timestamp: fixtureNow}})
		_ = tm.View()
	}
}
