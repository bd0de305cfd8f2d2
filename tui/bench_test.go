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
		c.drawn = drawnState{} // a full redraw, as a tick or a resize asks
		c.render()
	}
}

// BenchmarkLiveMessage measures one incoming message in the open chat (with
// 300 loaded) through the root model: Update and View, as each frame does —
// held as the program holds it (Live) and by value.
func BenchmarkLiveMessage(b *testing.B) {
	b.Run("live", func(b *testing.B) { benchmarkLiveMessage(b, func(m Model) tea.Model { return NewLive(m) }) })
	b.Run("value", func(b *testing.B) { benchmarkLiveMessage(b, func(m Model) tea.Model { return m }) })
}

func benchmarkLiveMessage(b *testing.B, hold func(Model) tea.Model) {
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
	tm, _ = tm.Update(historyMsg{conv: long, page: p, gen: tm.(Model).chat.windowGen})
	tm = hold(tm.(Model))
	seq := int64(300)
	b.ResetTimer()
	for b.Loop() {
		seq++
		tm, _ = tm.Update(client.MessageEvent{Message: wire.Message{ConversationID: long, SeqNo: seq, MessageID: fmt.Sprint(seq),
			SenderID: "dave", Content: "another one", Timestamp: fixtureNow}})
		_ = tm.View()
	}
}

// BenchmarkBurstInto10k is issue 17's case: a 2,000-message burst arriving in
// an open chat that has 10,000 messages loaded, through the root model as the
// event pump hands them over (eventBatchMsg: what waited together), with a
// View after each batch, as each frame does. Reported per message.
func BenchmarkBurstInto10k(b *testing.B) {
	for _, batch := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) {
			be := fixture()
			long := wire.DirectConversationID("alice", "dave")
			be.addMessages(long, []string{"dave", "alice"}, 10000, fixtureNow.Add(-48*time.Hour), func(i int) string {
				return fmt.Sprintf("message %d with a few words in it, as chat lines usually have", i)
			})
			be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 10000, LastMessageAt: fixtureNow})
			m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, PageSize: 100})
			var tm tea.Model = m
			tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			tm, _ = tm.Update(openConversationMsg{entry: be.inbox[len(be.inbox)-1]})
			p, _ := be.History(context.Background(), long, 0, 10000)
			tm, _ = tm.Update(historyMsg{conv: long, page: p, gen: tm.(Model).chat.windowGen})
			seq := int64(10000)
			b.ResetTimer()
			for b.Loop() {
				for sent := 0; sent < 2000; sent += batch {
					evs := make(eventBatchMsg, batch)
					for i := range evs {
						seq++
						evs[i] = client.MessageEvent{Message: wire.Message{ConversationID: long, SeqNo: seq, MessageID: fmt.Sprint(seq),
							SenderID: "dave", Content: "another line of the burst", Timestamp: fixtureNow}}
					}
					tm, _ = tm.Update(evs)
					_ = tm.View()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2000)/1000, "µs/msg")
		})
	}
}

// BenchmarkOpenAt5000Unread is opening a chat with 5,000 unread messages
// until its first unread is on screen under the "new" marker (issue 17:
// under 100 ms): the page around it in place of the newest, and the page
// above as the screen starts near its top (window.go). The backend's answers
// are made beforehand: this is the TUI's own part.
func BenchmarkOpenAt5000Unread(b *testing.B) {
	be := fixture()
	long := wire.DirectConversationID("alice", "dave")
	be.addMessages(long, []string{"dave"}, 6000, fixtureNow.Add(-48*time.Hour), func(i int) string {
		return fmt.Sprintf("message %d with a few words in it, as chat lines usually have", i)
	})
	entry := wire.InboxEntry{ConversationID: long, Type: wire.Direct, Peer: "dave", LastSeq: 6000, LastReadSeq: 1000, Unread: 5000, LastMessageAt: fixtureNow}
	be.inbox = append(be.inbox, entry)
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, PageSize: 50})
	m.chat.SetSize(120, 40)
	// The backend's answers, ready (its time is not the TUI's): the page
	// from just above the first unread, which opening asks for in place of
	// the newest (window.go), and the one above it.
	first := entry.LastReadSeq + 1 - unreadContext
	at, _ := be.History(context.Background(), long, first+50, 50)
	above, _ := be.History(context.Background(), long, first, 50)
	for b.Loop() {
		c := m.chat
		c.open(entry)
		c, _ = c.Update(historyMsg{conv: long, before: first + 50, page: at, fresh: true, gen: c.windowGen})
		c, _ = c.Update(historyMsg{conv: long, before: first, page: above, gen: c.windowGen})
		if c.newLine < 0 {
			b.Fatal("no unread marker")
		}
		_ = c.View()
	}
}
