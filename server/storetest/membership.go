package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// membershipEvent is actor's membership event of kind at seq; subjects are
// kept as the Service keeps them (server.Message.Subjects).
func membershipEvent(conv string, seq int64, actor, kind string, subjects []string, content string) server.Message {
	if len(subjects) > 0 {
		content = strings.Join(subjects, " ")
	}
	return server.Message{ConversationID: conv, SeqNo: seq, MessageID: fmt.Sprintf("me-%s-%d", actor, seq), SenderID: actor,
		Content: content, Timestamp: t0.Add(time.Duration(seq) * time.Second), Kind: kind}
}

func group(id, typ string, admin string, others ...string) (server.Conversation, []server.Participant) {
	c := server.Conversation{ID: id, Type: typ, Name: "crew", CreatedAt: t0}
	ps := []server.Participant{{ConversationID: id, UserID: admin, Role: wire.RoleAdmin, JoinedAt: t0}}
	for _, u := range others {
		ps = append(ps, server.Participant{ConversationID: id, UserID: u, Role: wire.RoleMember, JoinedAt: t0})
	}
	return c, ps
}

func memberIDs(t *testing.T, s server.Store, conv string) []string {
	t.Helper()
	ps, err := s.ListParticipants(context.Background(), conv)
	must(t, err)
	var out []string
	for _, p := range ps {
		out = append(out, p.UserID+":"+p.Role)
	}
	return out
}

// testMembershipEvents: each membership event is a row of the log, in seq
// order with the messages, and the change it records is made in the same
// write; a change that no longer fits the members (ErrTargetChanged) stores
// neither the row nor the change. Events are not unread, and are the preview
// only until the first message.
func testMembershipEvents(t *testing.T, s server.Store) {
	ctx := context.Background()
	c, ps := group("g:members", wire.Group, "alice", "bob")
	must(t, s.CreateConversation(ctx, c, ps))

	added := membershipEvent(c.ID, 1, "alice", wire.KindAdded, []string{"carol", "dave"}, "")
	must(t, s.AppendMessage(ctx, added, []string{"bob", "carol", "dave"}))
	if got, want := memberIDs(t, s, c.ID), []string{"alice:admin", "bob:member", "carol:member", "dave:member"}; !slices.Equal(got, want) {
		t.Fatalf("after added: members %v, want %v", got, want)
	}
	if p, err := s.GetParticipant(ctx, c.ID, "carol"); err != nil || !p.JoinedAt.Equal(added.Timestamp) {
		t.Fatalf("carol joined at %v (%v), want the event's time %v", p.JoinedAt, err, added.Timestamp)
	}
	conv, err := s.GetConversation(ctx, c.ID)
	must(t, err)
	if conv.LastSeq != 1 || conv.LastMessageBody != "alice added carol and dave" || conv.LastMessageSender != "" {
		t.Fatalf("a group with only an event: last_seq %d, preview %q by %q", conv.LastSeq, conv.LastMessageBody, conv.LastMessageSender)
	}
	// The new members have it pending, like any message after their join.
	for _, u := range []string{"carol", "dave"} {
		pend, err := s.ListPending(ctx, u)
		must(t, err)
		if len(pend) != 1 || pend[0].FirstUndeliveredSeq != 1 {
			t.Fatalf("%s's pending: %+v", u, pend)
		}
	}

	must(t, s.AppendMessage(ctx, msg(c.ID, 2, "bob", ""), []string{"alice", "carol", "dave"}))
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 3, "alice", wire.KindRemoved, []string{"dave"}, ""), []string{"bob", "carol"}))
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 4, "carol", wire.KindLeft, nil, ""), []string{"alice", "bob"}))
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 5, "alice", wire.KindRenamed, nil, "night shift"), []string{"bob"}))
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 6, "alice", wire.KindTopic, nil, "deploys"), []string{"bob"}))
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 7, "alice", wire.KindAdminGranted, []string{"bob"}, ""), []string{"bob"}))
	must(t, s.AppendMessage(ctx, msg(c.ID, 8, "bob", ""), []string{"alice"}))
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 9, "bob", wire.KindAdminRevoked, []string{"alice"}, ""), []string{"alice"}))

	if got, want := memberIDs(t, s, c.ID), []string{"alice:member", "bob:admin"}; !slices.Equal(got, want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	for _, u := range []string{"carol", "dave"} {
		pend, err := s.ListPending(ctx, u)
		must(t, err)
		if len(pend) != 0 {
			t.Fatalf("%s left but has pending rows %+v", u, pend)
		}
	}
	conv, err = s.GetConversation(ctx, c.ID)
	must(t, err)
	if conv.Name != "night shift" || conv.Topic != "deploys" || conv.LastSeq != 9 {
		t.Fatalf("conversation: %+v", conv)
	}
	if conv.LastMessageBody != "hello 8" || conv.LastMessageSender != "bob" {
		t.Fatalf("events after a message moved the preview: %q by %q", conv.LastMessageBody, conv.LastMessageSender)
	}
	// The log, in order: kinds and subjects as stored.
	page, err := s.ListMessagesAfter(ctx, c.ID, 0, 100)
	must(t, err)
	var log []string
	for _, m := range page {
		log = append(log, fmt.Sprintf("%d %s %s %s", m.SeqNo, m.Kind, m.SenderID, strings.Join(m.Subjects(), ",")))
	}
	want := []string{"1 added alice carol,dave", "2  bob ", "3 removed alice dave", "4 left carol ", "5 renamed alice ",
		"6 topic alice ", "7 admin_granted alice bob", "8  bob ", "9 admin_revoked bob alice"}
	if !slices.Equal(log, want) {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if n, err := s.CountMessages(ctx, c.ID, 0, 9, 100); err != nil || n != 2 {
		t.Fatalf("CountMessages over 2 messages and 7 membership events = %d, %v; want 2", n, err)
	}

	// Changes that no longer fit: nothing of them is stored.
	for _, bad := range []server.Message{
		membershipEvent(c.ID, 10, "bob", wire.KindAdded, []string{"alice"}, ""),         // a member already
		membershipEvent(c.ID, 10, "bob", wire.KindRemoved, []string{"dave"}, ""),        // not a member
		membershipEvent(c.ID, 10, "dave", wire.KindLeft, nil, ""),                       // not a member
		membershipEvent(c.ID, 10, "bob", wire.KindAdminGranted, []string{"erin"}, ""),   // not a member
		membershipEvent(c.ID, 10, "bob", wire.KindAdded, []string{"erin", "alice"}, ""), // one of two
	} {
		wantErr(t, s.AppendMessage(ctx, bad, []string{"alice"}), server.ErrTargetChanged)
		if got := memberIDs(t, s, c.ID); !slices.Equal(got, []string{"alice:member", "bob:admin"}) {
			t.Fatalf("a refused %s %q changed the members: %v", bad.Kind, bad.Content, got)
		}
		if page, err := s.ListMessagesAfter(ctx, c.ID, 9, 10); err != nil || len(page) != 0 {
			t.Fatalf("a refused %s left rows %+v (%v)", bad.Kind, page, err)
		}
	}
	// And the seq it was refused at is still free.
	must(t, s.AppendMessage(ctx, membershipEvent(c.ID, 10, "erin", wire.KindJoined, nil, ""), []string{"alice", "bob"}))
	if got := memberIDs(t, s, c.ID); !slices.Contains(got, "erin:member") {
		t.Fatalf("erin joined: members %v", got)
	}
}

// testChannels: channels, and only channels, are listed, by id a page at a
// time, with their names and topics as renames and topic changes leave them.
func testChannels(t *testing.T, s server.Store) {
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		c, ps := group(fmt.Sprintf("g:chan%d", i), wire.Channel, "alice")
		c.Name, c.Topic = fmt.Sprintf("channel %d", i), fmt.Sprintf("topic %d", i)
		must(t, s.CreateConversation(ctx, c, ps))
		ids = append(ids, c.ID)
	}
	g, ps := group("g:private", wire.Group, "alice", "bob")
	must(t, s.CreateConversation(ctx, g, ps))
	d, dps := direct("alice", "bob")
	must(t, s.CreateConversation(ctx, d, dps))

	var listed []string
	after := ""
	for pages := 0; ; pages++ {
		page, err := s.ListChannels(ctx, after, 2)
		must(t, err)
		if len(page) > 2 || pages > 5 {
			t.Fatalf("page of %d (limit 2), page %d", len(page), pages)
		}
		if len(page) == 0 {
			break
		}
		for _, c := range page {
			if c.Type != wire.Channel || c.Name == "" || !c.CreatedAt.Equal(t0) {
				t.Fatalf("listed %+v", c)
			}
			listed = append(listed, c.ID)
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(listed, ids) {
		t.Fatalf("listed %v, want the channels %v", listed, ids)
	}

	// Rename and topic change reach the listing; joining adds the member.
	must(t, s.AppendMessage(ctx, membershipEvent(ids[1], 1, "alice", wire.KindRenamed, nil, "ops"), nil))
	must(t, s.AppendMessage(ctx, membershipEvent(ids[1], 2, "alice", wire.KindTopic, nil, ""), nil))
	must(t, s.AppendMessage(ctx, membershipEvent(ids[1], 3, "bob", wire.KindJoined, nil, ""), []string{"alice"}))
	page, err := s.ListChannels(ctx, ids[0], 1)
	must(t, err)
	if len(page) != 1 || page[0].ID != ids[1] || page[0].Name != "ops" || page[0].Topic != "" {
		t.Fatalf("after rename and topic cleared: %+v", page)
	}
	if got := memberIDs(t, s, ids[1]); !slices.Equal(got, []string{"alice:admin", "bob:member"}) {
		t.Fatalf("after bob joined: %v", got)
	}
	// A group renamed stays out of the listing.
	must(t, s.AppendMessage(ctx, membershipEvent(g.ID, 1, "alice", wire.KindRenamed, nil, "secret"), []string{"bob"}))
	all, err := s.ListChannels(ctx, "", 100)
	must(t, err)
	if len(all) != len(ids) {
		t.Fatalf("after a group's rename, %d listed: %+v", len(all), all)
	}
	// A conversation's topic reads back.
	got, err := s.GetConversation(ctx, ids[3])
	must(t, err)
	if got.Type != wire.Channel || got.Topic != "topic 3" {
		t.Fatalf("channel read back: %+v", got)
	}
}
