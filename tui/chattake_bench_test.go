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

// BenchmarkTakeMessage is what the TUI's Update does with one incoming
// message in the open chat, 10,000 loaded, as a steady stream hands them
// over (a receive commit of one, client.MessagesEvent): the inbox row, the
// chat's lines drawn, the read boundary. No View: that is the renderer's
// side. Text as chatbench tui-burst sends it. Per message.
func BenchmarkTakeMessage(b *testing.B) {
	for _, conv := range []string{"direct", "group"} {
		b.Run(conv, func(b *testing.B) {
			be := fixture()
			id := wire.DirectConversationID("alice", "dave")
			sender := "dave"
			entry := wire.InboxEntry{ConversationID: id, Type: wire.Direct, Peer: "dave", LastSeq: 10000, LastMessageAt: fixtureNow}
			if conv == "group" {
				id, sender = "g:ten", "m0"
				members := []wire.Participant{{UserID: "alice", Role: wire.RoleAdmin}}
				for i := range 9 {
					members = append(members, wire.Participant{UserID: fmt.Sprintf("m%d", i), Role: wire.RoleMember})
				}
				be.convs[id] = wire.Conversation{ConversationID: id, Type: wire.Group, Name: "ten", Participants: members}
				entry = wire.InboxEntry{ConversationID: id, Type: wire.Group, Name: "ten", LastSeq: 10000, LastMessageAt: fixtureNow}
			}
			be.addMessages(id, []string{sender, "alice"}, 10000, fixtureNow.Add(-48*time.Hour), func(i int) string {
				return fmt.Sprintf("message %d of end-of-run-01, about as long as people type", i)
			})
			be.inbox = append(be.inbox, entry)
			m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, PageSize: 100})
			var tm tea.Model = NewLive(m)
			tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			tm, _ = tm.Update(openConversationMsg{entry: entry})
			p, _ := be.History(context.Background(), id, 0, 10000)
			tm, _ = tm.Update(historyMsg{conv: id, page: p, gen: tm.(*Live).m.chat.windowGen})
			_ = tm.View()
			seq := int64(10000)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				seq++
				tm, _ = tm.Update(client.MessagesEvent{Messages: []wire.Message{{ConversationID: id, SeqNo: seq,
					MessageID: fmt.Sprintf("tb-end-of-run-01-%d", seq), SenderID: sender,
					Content: fmt.Sprintf("message %d of end-of-run-01, about as long as people type", seq), Timestamp: fixtureNow}}})
			}
		})
	}
}
