package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func generousMemberLimits(c *node.Config) { c.Limits = server.UserLimits{MemberAdds: 100} }

// logLines is the conversation's history, oldest first, one line a row: a
// membership event as it reads, a message as sender: content.
func logLines(a *api, conv string) []string {
	a.t.Helper()
	h := a.history(conv, 0, 100)
	var out []string
	for i := len(h.Messages) - 1; i >= 0; i-- {
		m := h.Messages[i]
		if line := m.MembershipLine(nil); line != "" {
			out = append(out, line)
		} else {
			out = append(out, m.SenderID+": "+m.Content)
		}
	}
	return out
}

// Every change to a group leaves its line in the log, in order with the
// messages, and reaches the members live, the removed one included; none is
// unread or the preview once a message is there.
func TestMembershipEventsInTheLog(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(generousMemberLimits))
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	g := alice.group("crew", "bob")
	bws, cws := dial(t, bob), dial(t, carol)

	var in wire.InboxResponse
	alice.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 1 || in.Conversations[0].LastMessageBody != "" {
		t.Fatalf("a new group's inbox row: %+v", in.Conversations)
	}
	var c wire.Conversation
	if st := alice.do("POST", "/v1/conversations/"+g+"/members", wire.MembersRequest{Members: []string{"carol"}}, &c); st != 200 {
		t.Fatalf("add: %d", st)
	}
	for who, ws := range map[string]*wsClient{"bob": bws, "carol": cws} {
		f := ws.next(isMessage(g))
		if f.Message.Kind != wire.KindAdded || !slices.Equal(f.Message.Members, []string{"carol"}) || f.Message.SenderID != "alice" {
			t.Fatalf("%s got %+v, want alice's added carol", who, f.Message)
		}
	}
	// With no message yet, the event is the preview.
	carol.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 1 || in.Conversations[0].LastMessageBody != "alice added carol" || in.Conversations[0].Unread != 0 {
		t.Fatalf("carol's inbox after being added: %+v", in.Conversations)
	}
	alice.send(g, "m1", "welcome carol")
	name, topic := "night shift", "deploys"
	if st := alice.do("PATCH", "/v1/conversations/"+g, wire.ConversationChange{Name: &name, Topic: &topic}, &c); st != 200 || c.Name != name || c.Topic != topic {
		t.Fatalf("rename and topic: %d %+v", st, c)
	}
	var e wire.ErrorResponse
	if st := bob.do("PATCH", "/v1/conversations/"+g, wire.ConversationChange{Topic: &name}, &e); st != http.StatusForbidden {
		t.Fatalf("a member set the topic: %d", st)
	}
	if st := alice.do("PUT", "/v1/conversations/"+g+"/members/bob/role", wire.RoleRequest{Role: wire.RoleAdmin}, &c); st != 200 {
		t.Fatalf("grant: %d", st)
	}
	if st := alice.do("PUT", "/v1/conversations/"+g+"/members/bob/role", wire.RoleRequest{Role: "owner"}, &e); st != http.StatusBadRequest || e.Error.Code != wire.CodeInvalid {
		t.Fatalf("role owner: %d %+v", st, e.Error)
	}
	carol.do("GET", "/v1/inbox", nil, &in)
	if in.Conversations[0].Unread != 1 || in.Conversations[0].LastMessageBody != "welcome carol" || in.Conversations[0].Name != name {
		t.Fatalf("carol's inbox counts or previews events: %+v", in.Conversations[0])
	}
	if st := bob.do("DELETE", "/v1/conversations/"+g+"/members/carol", nil, nil); st != http.StatusNoContent {
		t.Fatalf("remove by the new admin: %d", st)
	}
	if f := cws.next(func(f wire.Frame) bool { return isMessage(g)(f) && f.Message.Kind == wire.KindRemoved }); f.Message.SenderID != "bob" {
		t.Fatalf("carol was not shown her removal: %+v", f.Message)
	}
	if st := alice.do("DELETE", "/v1/conversations/"+g+"/members/carol", nil, &e); st != http.StatusNotFound {
		t.Fatalf("removing a non-member: %d", st)
	}
	if st := alice.do("DELETE", "/v1/conversations/"+g+"/members/alice", nil, nil); st != http.StatusNoContent {
		t.Fatalf("leave: %d", st)
	}
	want := []string{"alice added carol", "alice: welcome carol", "alice renamed the group to “night shift”",
		"alice set the topic to “deploys”", "alice made bob admin", "bob removed carol", "alice left"}
	if got := logLines(bob, g); !slices.Equal(got, want) {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// bob's live copy came in the same order. Delivery is at least once and
	// this test client acks nothing, so a copy may come again after the
	// redelivery delay: clients dedupe by seq_no, and so does this.
	var live []string
	seen := map[int64]bool{}
	for len(live) < len(want)-1 { // bob's ws saw everything after the add he got above
		f := bws.next(isMessage(g))
		if seen[f.Message.SeqNo] || f.Message.SeqNo == 1 {
			continue
		}
		seen[f.Message.SeqNo] = true
		if line := f.Message.MembershipLine(nil); line != "" {
			live = append(live, line)
		} else {
			live = append(live, f.Message.SenderID+": "+f.Message.Content)
		}
	}
	if !slices.Equal(live, want[1:]) {
		t.Fatalf("bob's live frames:\n%s\nwant:\n%s", strings.Join(live, "\n"), strings.Join(want[1:], "\n"))
	}
	// A membership event cannot be sent.
	if st := bob.do("POST", "/v1/conversations/"+g+"/messages", wire.SendRequest{MessageID: "fake", Kind: wire.KindAdded, TargetSeq: 1}, &e); st != http.StatusBadRequest {
		t.Fatalf("a forged membership event: %d", st)
	}
}

// Channels: listed to every account, joined and left by oneself, with the
// history from before the join; private groups are neither listed nor
// joinable; creation is rate-limited per account.
func TestChannels(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.Limits = server.UserLimits{MemberAdds: 100, Conversations: 2}
	}))
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	var ch wire.Conversation
	if st := alice.do("POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Channel, Name: "ops", Topic: "deploys"}, &ch); st != http.StatusCreated || ch.Type != wire.Channel || ch.Topic != "deploys" {
		t.Fatalf("create channel: %d %+v", st, ch)
	}
	private := alice.group("secret")
	alice.send(ch.ConversationID, "m1", "before bob")

	var list wire.ChannelsResponse
	if st := bob.do("GET", "/v1/channels", nil, &list); st != 200 || len(list.Channels) != 1 {
		t.Fatalf("list: %d %+v", st, list)
	}
	if got := list.Channels[0]; got.ConversationID != ch.ConversationID || got.Name != "ops" || got.Topic != "deploys" || got.Joined {
		t.Fatalf("bob sees %+v", got)
	}
	var e wire.ErrorResponse
	if st := bob.do("GET", "/v1/conversations/"+ch.ConversationID+"/messages", nil, &e); st != http.StatusForbidden {
		t.Fatalf("history before joining: %d", st)
	}
	if st := bob.do("POST", "/v1/conversations/"+private+"/join", nil, &e); st != http.StatusNotFound {
		t.Fatalf("joining a private group: %d", st)
	}
	var joined wire.Conversation
	if st := bob.do("POST", "/v1/conversations/"+ch.ConversationID+"/join", nil, &joined); st != 200 || len(joined.Participants) != 2 {
		t.Fatalf("join: %d %+v", st, joined)
	}
	if st := bob.do("POST", "/v1/conversations/"+ch.ConversationID+"/join", nil, &joined); st != 200 {
		t.Fatalf("joining again: %d", st)
	}
	if got, want := logLines(bob, ch.ConversationID), []string{"alice: before bob", "bob joined"}; !slices.Equal(got, want) {
		t.Fatalf("bob's history after joining: %v, want %v (one joined line, whatever the joins)", got, want)
	}
	bob.do("GET", "/v1/channels", nil, &list)
	if !list.Channels[0].Joined {
		t.Fatalf("after joining: %+v", list.Channels[0])
	}
	topic := "incidents"
	if st := bob.do("PATCH", "/v1/conversations/"+ch.ConversationID, wire.ConversationChange{Topic: &topic}, &e); st != http.StatusForbidden {
		t.Fatalf("a member set a channel's topic: %d", st)
	}
	if st := bob.do("DELETE", "/v1/conversations/"+ch.ConversationID+"/members/bob", nil, nil); st != http.StatusNoContent {
		t.Fatalf("leave: %d", st)
	}
	if got := logLines(alice, ch.ConversationID); got[len(got)-1] != "bob left" {
		t.Fatalf("after bob left: %v", got)
	}
	// Paging, and the creation limit (Conversations: 2 a second): creating
	// channels as fast as they are answered runs into it, however slow the
	// machine (20 tries take well under the 10 s that would refill them).
	var st int
	for i := range 20 {
		st = alice.do("POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Channel, Name: fmt.Sprintf("c%d", i)}, &e)
		if st == http.StatusTooManyRequests {
			break
		}
	}
	if st != http.StatusTooManyRequests || e.Error.Code != wire.CodeRateLimited {
		t.Fatalf("channel creation is not rate-limited: %d", st)
	}
	if st := bob.do("GET", "/v1/channels?limit=1", nil, &list); st != 200 || len(list.Channels) != 1 || list.Next == "" {
		t.Fatalf("first page: %d %+v", st, list)
	}
	var rest wire.ChannelsResponse
	bob.do("GET", "/v1/channels?limit=10&after="+list.Next, nil, &rest)
	if len(rest.Channels) == 0 || rest.Channels[0].ConversationID <= list.Channels[0].ConversationID || rest.Next != "" {
		t.Fatalf("second page: %+v after %+v", rest, list)
	}
	if st := bob.do("GET", "/v1/channels?after=nonsense", nil, &e); st != http.StatusBadRequest {
		t.Fatalf("a bad cursor: %d", st)
	}
}

// Adding more users than one event holds records an event per 25 of them,
// in order, and every one of them becomes a member (on DynamoDB each event
// is one transaction, which has room for 25 new participants and the
// receivers' pending rows).
func TestAddingManyMembersRecordsAnEventPer25(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(generousMemberLimits))
	alice := register(t, srv, "alice")
	var users []string
	for i := range 30 {
		u := fmt.Sprintf("user%02d", i)
		register(t, srv, u)
		users = append(users, u)
	}
	g := alice.group("crowd")
	var c wire.Conversation
	if st := alice.do("POST", "/v1/conversations/"+g+"/members", wire.MembersRequest{Members: users}, &c); st != 200 || len(c.Participants) != 31 {
		t.Fatalf("add 30: %d, %d members", st, len(c.Participants))
	}
	h := alice.history(g, 0, 10)
	if len(h.Messages) != 2 {
		t.Fatalf("%d events for 30 users, want 2", len(h.Messages))
	}
	first, second := h.Messages[1], h.Messages[0] // newest first
	if first.Kind != wire.KindAdded || !slices.Equal(first.Members, users[:25]) || second.Kind != wire.KindAdded || !slices.Equal(second.Members, users[25:]) {
		t.Fatalf("events: %+v then %+v", first, second)
	}
}
