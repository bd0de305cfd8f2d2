package httpd_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// One user's history pages, inbox loads, profile writes, new direct
// conversations and member additions are each limited per second, answered
// as the send limit is (429 rate_limited with a retry hint), and nothing
// refused took effect; another user is not held back by the first one's
// spending. Each limit is n a second: 2n+1 calls in a row span at most two
// one-second windows, so at least one is refused.
func TestPerUserLimitsOnReadsAndWrites(t *testing.T) {
	const n = 3
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.Limits = server.UserLimits{History: n, Inbox: n, ProfileWrites: n, Conversations: n, MemberAdds: n}
	}))
	c := from("127.0.0.1")
	users := []string{"alice", "bob", "carol"}
	for i := range 2*n + 2 {
		users = append(users, fmt.Sprintf("peer%02d", i))
	}
	tok := map[string]string{}
	for _, u := range users {
		tok[u] = registerFrom(t, srv.URL, u, "127.0.0.1")
	}
	direct := wire.DirectConversationID("alice", "bob")
	if a := call(t, c, "POST", srv.URL+"/v1/conversations", tok["alice"], jsonBody(wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}})); a.status >= 300 {
		t.Fatalf("create direct: %d %s", a.status, a.body)
	}
	var group wire.Conversation
	a := call(t, c, "POST", srv.URL+"/v1/conversations", tok["alice"], jsonBody(wire.CreateConversationRequest{Type: wire.Group, Name: "g", Members: []string{"bob"}}))
	if a.status >= 300 || json.Unmarshal(a.body, &group) != nil {
		t.Fatalf("create group: %d %s", a.status, a.body)
	}

	// refusedWithin makes the calls do(i) for i < 2n+1 and says at which one
	// the first refusal came, checking its shape; -1 when none was refused.
	refused := func(what string, do func(i int) answer) int {
		t.Helper()
		for i := range 2*n + 1 {
			a := do(i)
			if a.status < 300 {
				continue
			}
			if a.status != http.StatusTooManyRequests || a.err.Code != wire.CodeRateLimited || a.err.RetryAfterMs <= 0 || a.header.Get("Retry-After") == "" {
				t.Fatalf("%s: refused with %d %+v, want 429 rate_limited with a retry hint", what, a.status, a.err)
			}
			return i
		}
		t.Fatalf("%s: %d calls in a row, none refused (limit %d a second)", what, 2*n+1, n)
		return -1
	}
	hist := srv.URL + "/v1/conversations/" + direct + "/messages"
	refused("history", func(int) answer { return call(t, c, "GET", hist, tok["alice"], nil) })
	// bob reads the same conversation at once: alice's spending is hers.
	if a := call(t, c, "GET", hist, tok["bob"], nil); a.status != 200 {
		t.Fatalf("bob's history while alice is limited: %d %s", a.status, a.body)
	}
	refused("inbox", func(int) answer { return call(t, c, "GET", srv.URL+"/v1/inbox", tok["alice"], nil) })

	names := map[int]string{}
	i := refused("profile", func(i int) answer {
		name := fmt.Sprintf("Alice %d", i)
		names[i] = name
		return call(t, c, "PATCH", srv.URL+"/v1/me", tok["alice"], jsonBody(wire.ProfileUpdate{DisplayName: &name}))
	})
	var me wire.Profile
	if a := call(t, c, "GET", srv.URL+"/v1/me", tok["alice"], nil); json.Unmarshal(a.body, &me) != nil || me.DisplayName != names[i-1] {
		t.Fatalf("after a refused profile write the name is %q, want the last accepted %q", me.DisplayName, names[i-1])
	}

	i = refused("conversation", func(i int) answer {
		return call(t, c, "POST", srv.URL+"/v1/conversations", tok["carol"], jsonBody(wire.CreateConversationRequest{Type: wire.Direct, Members: []string{users[3+i]}}))
	})
	if a := call(t, c, "GET", srv.URL+"/v1/conversations/"+wire.DirectConversationID("carol", users[3+i]), tok["carol"], nil); a.status != http.StatusNotFound && a.status != http.StatusForbidden {
		t.Fatalf("a refused direct conversation exists: %d %s", a.status, a.body)
	}
	// Finding an existing direct conversation is not counted: alice finds
	// hers with bob again and again.
	for range 2*n + 1 {
		if a := call(t, c, "POST", srv.URL+"/v1/conversations", tok["alice"], jsonBody(wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}})); a.status != 200 {
			t.Fatalf("finding an existing direct conversation: %d %s", a.status, a.body)
		}
	}

	i = refused("member", func(i int) answer {
		return call(t, c, "POST", srv.URL+"/v1/conversations/"+group.ConversationID+"/members", tok["alice"], jsonBody(wire.MembersRequest{Members: []string{users[3+i]}}))
	})
	a = call(t, c, "GET", srv.URL+"/v1/conversations/"+group.ConversationID, tok["alice"], nil)
	if json.Unmarshal(a.body, &group) != nil {
		t.Fatalf("get group: %d %s", a.status, a.body)
	}
	for _, m := range group.Participants {
		if m.UserID == users[3+i] {
			t.Fatalf("a refused member addition took effect: %s is a member", m.UserID)
		}
	}
}
