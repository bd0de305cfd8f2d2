package e2e

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// A message_id is idempotent for its sender only. Another member sending
// the same id (docs/cli.md suggests predictable ones, deploy-$BUILD_ID) is
// refused with message_id_taken on every path: never answered with the
// first sender's message as if their own had been stored.
func TestMessageIDTakenByAnotherMember(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	bobs := bob.send(conv, "release-7", "all good")
	aws, bws := dial(t, alice), dial(t, bob)

	taken := func(how string, st int, e wire.ErrorResponse) {
		t.Helper()
		if st != http.StatusConflict || e.Error == nil || e.Error.Code != wire.CodeMessageIDTaken {
			t.Fatalf("%s: status %d, %+v; want 409 message_id_taken", how, st, e.Error)
		}
	}
	path := "/v1/conversations/" + conv + "/messages"
	var e wire.ErrorResponse
	taken("HTTP", alice.do("POST", path, wire.SendRequest{MessageID: "release-7", Content: "BROKEN, roll back"}, &e), e)
	e = wire.ErrorResponse{}
	taken("HTTP first_try", alice.do("POST", path, wire.SendRequest{MessageID: "release-7", Content: "BROKEN", FirstTry: true}, &e), e)
	e = wire.ErrorResponse{}
	taken("HTTP reply first_try", alice.do("POST", path, wire.SendRequest{MessageID: "release-7", Content: "BROKEN", ReplyTo: bobs.SeqNo, FirstTry: true}, &e), e)

	// Over the socket, pipelined so that the worker stores them as one batch:
	// the taken id fails alone, its neighbours are stored.
	for _, firstTry := range []bool{false, true} {
		ids := map[string]string{}
		for _, mid := range []string{"a-1", "release-7", "a-2"} {
			if firstTry {
				mid += "-ft"
				if mid == "release-7-ft" {
					mid = "release-7"
				}
			}
			id := aws.id()
			aws.write(wire.Frame{Type: wire.TypeSend, ID: id, ConversationID: conv, MessageID: mid, Content: "from alice " + mid, FirstTry: firstTry})
			ids[id] = mid
		}
		for range 3 {
			f := aws.next(func(f wire.Frame) bool { return ids[f.ID] != "" })
			switch mid := ids[f.ID]; {
			case mid == "release-7":
				if f.Type != wire.TypeError || f.Error.Code != wire.CodeMessageIDTaken {
					t.Fatalf("socket (first_try %v): the taken id answered %+v", firstTry, f)
				}
			case f.Type != wire.TypeSent || f.SeqNo == bobs.SeqNo:
				t.Fatalf("socket (first_try %v): %s answered %+v", firstTry, mid, f)
			}
		}
	}

	// bob's own resend still gets his first answer.
	var again wire.SendResponse
	if st := bob.do("POST", path, wire.SendRequest{MessageID: "release-7", Content: "all good"}, &again); st != http.StatusOK || !reflect.DeepEqual(again, bobs) {
		t.Fatalf("bob's resend: status %d, %+v; first %+v", st, again, bobs)
	}
	h := bob.history(conv, 0, 100)
	if len(h.Messages) != 5 {
		t.Fatalf("stored %d messages, want bob's and alice's four: %+v", len(h.Messages), h.Messages)
	}
	for _, m := range h.Messages {
		if m.MessageID == "release-7" && (m.SenderID != "bob" || m.Content != "all good") {
			t.Fatalf("release-7 stored as %+v", m)
		}
	}
	// bob's socket saw alice's four messages and nothing of release-7: no
	// second copy of his own, nothing of alice's refused sends.
	if n := bws.count(isMessage(conv), 500*time.Millisecond); n != 4 {
		t.Fatalf("bob's socket got %d messages, want 4", n)
	}
}
