package httpd_test

import (
	"net/http"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// GET /v1/mentions answers a page, and refuses a before= that is no time and
// a limit out of range with 400 invalid; PUT of a direct conversation's
// mention rule is 400 too.
func TestMentionsRoutes(t *testing.T) {
	srv := servertest.Start(t)
	alice := register(t, srv.URL, "alice")
	register(t, srv.URL, "bob")
	c := from("127.0.0.1")
	if a := call(t, c, "GET", srv.URL+"/v1/mentions", alice, nil); a.status != http.StatusOK {
		t.Fatalf("GET /v1/mentions: %d %q", a.status, a.body)
	}
	for _, q := range []string{"?before=yesterday", "?limit=101", "?limit=-1"} {
		if a := call(t, c, "GET", srv.URL+"/v1/mentions"+q, alice, nil); a.status != http.StatusBadRequest || a.err.Code != wire.CodeInvalid {
			t.Fatalf("GET /v1/mentions%s: %d %q, want 400 invalid", q, a.status, a.body)
		}
	}
	dm := wire.DirectConversationID("alice", "bob")
	call(t, c, "POST", srv.URL+"/v1/conversations", alice, jsonBody(wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}))
	if a := call(t, c, "PUT", srv.URL+"/v1/conversations/"+dm+"/mentions", alice, jsonBody(wire.MentionSetting{AllAdminsOnly: true})); a.status != http.StatusBadRequest {
		t.Fatalf("PUT the rule of a direct conversation: %d %q", a.status, a.body)
	}
}
