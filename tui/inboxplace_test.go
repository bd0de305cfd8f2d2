package tui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// manyConversations is the fixture with 40 conversations in its inbox.
func manyConversations() *fakeBackend {
	be := fixture()
	for i := range 37 {
		id := fmt.Sprintf("g:more%02d", i)
		be.convs[id] = wire.Conversation{ConversationID: id, Type: wire.Group, Name: id[2:],
			Participants: []wire.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}}}
		// Some share a time, so the order of ties counts too.
		be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: id, Type: wire.Group, Name: id[2:], LastSeq: 1,
			LastMessageBody: "older", LastMessageSender: "bob", LastMessageAt: fixtureNow.Add(-time.Duration(10+i/3) * time.Hour)})
	}
	return be
}

func entryIDs(es []wire.InboxEntry) []string {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ConversationID
	}
	return ids
}

// A message moves its conversation's entry to where sorting the list would
// put it, without sorting the list: over 300 messages into 40
// conversations, at times that go forward, stand still and (a sender's
// clock behind) go back, the order after each is the stable sort's, the
// selection stays on its conversation, and the list is never sorted whole.
func TestInboxPlacesAMessagesConversation(t *testing.T) {
	h := newHarness(t, manyConversations(), 100, 30)
	h.key("j", "j", "j")
	m := h.root() // events applied here, their commands (bells) dropped
	sel, _ := m.inbox.selected()
	want := slices.Clone(m.inbox.entries)
	sorts := m.inbox.sorts
	rnd := rand.New(rand.NewPCG(1, 2))
	at := fixtureNow
	for n := range 300 {
		i := rnd.IntN(len(want))
		e := &want[i]
		switch rnd.IntN(4) {
		case 0: // the same time as the newest
		case 1:
			at = at.Add(-time.Duration(rnd.IntN(48)) * time.Hour) // behind
		default:
			at = at.Add(time.Second)
		}
		e.LastSeq++
		e.LastMessageAt = at
		m.handleEvent(client.MessageEvent{Message: wire.Message{ConversationID: e.ConversationID, SeqNo: e.LastSeq,
			MessageID: fmt.Sprint("m", n), SenderID: "bob", Content: "hi", Timestamp: at}})
		sort.SliceStable(want, func(a, b int) bool { return want[a].LastMessageAt.After(want[b].LastMessageAt) })
		got := m.inbox
		if !slices.Equal(entryIDs(got.entries), entryIDs(want)) {
			t.Fatalf("after message %d (into %s at %v) the inbox reads\n%v\nwant the sorted\n%v", n, e.ConversationID, at, entryIDs(got.entries), entryIDs(want))
		}
		if s, _ := got.selected(); s.ConversationID != sel.ConversationID {
			t.Fatalf("after message %d the selection is on %s, want %s", n, s.ConversationID, sel.ConversationID)
		}
	}
	if got := m.inbox.sorts - sorts; got != 0 {
		t.Fatalf("300 messages sorted the inbox %d times, want none (each entry moved)", got)
	}
}

// A commit's messages in one client.MessagesEvent leave the screen as the
// same messages one MessageEvent each do: the inbox's rows (order, unread
// counts, mentions, previews), the notifications held and the open chat,
// with an event (a reaction) and a conversation the inbox does not list yet
// among them.
func TestMessagesEventIsItsMessages(t *testing.T) {
	bob := wire.DirectConversationID("alice", "bob")
	var msgs []wire.Message
	seqs := map[string]int64{bob: 7, "g:team": 3, "g:more05": 1, "g:more20": 1}
	for i := range 60 {
		conv := []string{bob, "g:team", "g:more05", "g:more20"}[i%4]
		seqs[conv]++
		m := wire.Message{ConversationID: conv, SeqNo: seqs[conv], MessageID: fmt.Sprint("b", i),
			SenderID: []string{"bob", "carol", "alice"}[i%3], Content: fmt.Sprintf("line %d", i), Timestamp: fixtureNow.Add(time.Duration(i) * time.Second)}
		if i%7 == 3 {
			m.Content = "@alice look"
			m.Mentions = []string{"alice"}
		}
		if i == 30 {
			m.Kind, m.TargetSeq, m.Content = wire.KindReaction, seqs[conv]-1, "👍"
		}
		msgs = append(msgs, m)
	}
	msgs = append(msgs, wire.Message{ConversationID: "g:new", SeqNo: 1, MessageID: "n1", SenderID: "bob", Content: "a new group", Timestamp: fixtureNow})

	run := func(batched bool) Model {
		be := manyConversations()
		be.convs["g:new"] = wire.Conversation{ConversationID: "g:new", Type: wire.Group, Name: "new",
			Participants: []wire.Participant{{UserID: "alice", Role: wire.RoleMember}, {UserID: "bob", Role: wire.RoleMember}}}
		h := newHarness(t, be, 140, 30)
		h.key("enter") // the first chat open beside the inbox
		h.send(tea.BlurMsg{})
		// The cache has what the events brought (the new group's row).
		be.inbox = append(be.inbox, wire.InboxEntry{ConversationID: "g:new", Type: wire.Group, Name: "new", LastSeq: 1,
			LastMessageBody: "a new group", LastMessageSender: "bob", LastMessageAt: fixtureNow})
		if batched {
			h.send(client.MessagesEvent{Messages: slices.Clone(msgs)})
		} else {
			// As the event pump hands events that waited together.
			evs := eventBatchMsg{}
			for _, m := range msgs {
				evs = append(evs, client.MessageEvent{Message: m})
			}
			h.send(evs)
		}
		return h.root()
	}
	one, batch := run(false), run(true)
	if !reflect.DeepEqual(one.inbox.entries, batch.inbox.entries) {
		t.Fatalf("the inbox after a MessagesEvent\n%+v\nwant as after its messages one by one\n%+v", batch.inbox.entries, one.inbox.entries)
	}
	if one.inbox.cursor != batch.inbox.cursor || one.held.count != batch.held.count || !one.lastNotify.Equal(batch.lastNotify) {
		t.Fatalf("batched: cursor %d, %d held since %v; one by one: cursor %d, %d held since %v",
			batch.inbox.cursor, batch.held.count, batch.lastNotify, one.inbox.cursor, one.held.count, one.lastNotify)
	}
	if one.held.count == 0 {
		t.Fatal("no notification held: the test tests nothing of them")
	}
	if got, want := batch.render(), one.render(); got != want {
		t.Fatalf("the screen after a MessagesEvent:\n%s\nwant as after its messages one by one:\n%s", got, want)
	}
}
