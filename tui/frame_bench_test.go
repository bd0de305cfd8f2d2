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

// BenchmarkInboxShownMessage is one incoming message with the inbox shown
// (40 conversations, messages going round 10 of them), through the root
// model: Update and View, as a frame of one message does. Per message.
func BenchmarkInboxShownMessage(b *testing.B) {
	be := fixture()
	var ids []string
	for i := range 40 {
		peer := fmt.Sprintf("peer%02d", i)
		id := wire.DirectConversationID("alice", peer)
		ids = append(ids, id)
		be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: id, Type: wire.Direct, Peer: peer, LastSeq: 1,
			LastMessageBody: "hello there", LastMessageSender: peer, LastMessageAt: fixtureNow.Add(-time.Duration(i) * time.Minute)})
	}
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC})
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	entries, _ := be.Inbox(context.Background())
	tm, _ = tm.Update(inboxLoadedMsg{entries, nil})
	seqs := map[string]int64{}
	n := 0
	for b.Loop() {
		id := ids[n%10]
		n++
		seqs[id]++
		tm, _ = tm.Update(client.MessageEvent{Message: wire.Message{ConversationID: id, SeqNo: 1 + seqs[id], MessageID: fmt.Sprint(n),
			SenderID: id[len("dm:alice:"):], Content: fmt.Sprintf("message %d of the burst", n), Timestamp: fixtureNow}})
		_ = tm.View()
	}
}

// BenchmarkGroupMessageAndAcks is one incoming message in an open group of
// 10 followed by the eight other members' acks, applied as the event pump
// hands them over when they come apart: the message, then the acks in one
// batch (one Update and one View each). Per message.
func BenchmarkGroupMessageAndAcks(b *testing.B) {
	be := fixture()
	g := "g:ten"
	members := []wire.Participant{{UserID: "alice", Role: wire.RoleAdmin}}
	for i := range 9 {
		members = append(members, wire.Participant{UserID: fmt.Sprintf("m%d", i), Role: wire.RoleMember})
	}
	be.convs[g] = wire.Conversation{ConversationID: g, Type: wire.Group, Name: "ten", Participants: members}
	be.addMessages(g, []string{"m0", "alice"}, 300, fixtureNow.Add(-time.Hour), func(i int) string {
		return fmt.Sprintf("message %d with a few words in it", i)
	})
	be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: g, Type: wire.Group, Name: "ten", LastSeq: 300, LastMessageAt: fixtureNow})
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, PageSize: 100})
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	tm, _ = tm.Update(openConversationMsg{entry: be.inbox[len(be.inbox)-1]})
	p, _ := be.History(context.Background(), g, 0, 300)
	tm, _ = tm.Update(historyMsg{conv: g, page: p, gen: tm.(Model).chat.windowGen})
	seq := int64(300)
	for b.Loop() {
		seq++
		tm, _ = tm.Update(client.MessageEvent{Message: wire.Message{ConversationID: g, SeqNo: seq, MessageID: fmt.Sprint(seq),
			SenderID: "m0", Content: "another one", Timestamp: fixtureNow}})
		_ = tm.View()
		acks := make(eventBatchMsg, 0, 8)
		for i := 1; i < 9; i++ {
			acks = append(acks, client.StatusEvent{ConversationID: g,
				Status: wire.MemberStatus{UserID: fmt.Sprintf("m%d", i), LastDeliveredSeq: seq}})
		}
		tm, _ = tm.Update(acks)
		_ = tm.View()
	}
}
