package dynamo_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/wire"
)

// A send on DynamoDB answers what is known of its transaction: one whose
// answer was lost (DynamoDB applied it, then the call timed out) is
// maybe_stored, also the one whose failure opens the circuit; one refused by
// the open circuit before it was sent is unavailable. Resent with the same
// message_ids, every message is stored once, in the order sent.
func TestSendAnswersOnDynamoFaults(t *testing.T) {
	target, err := url.Parse(endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var lose, hangReads atomic.Bool
	ended := make(chan struct{}) // lets go of the requests held unanswered
	hold := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-ended:
		}
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hangReads.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetItem") {
			hold(r)
			return
		}
		if lose.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
			// Applied, and the answer never comes: the store gives up at its deadline.
			forward.ServeHTTP(httptest.NewRecorder(), r)
			hold(r)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	t.Cleanup(func() { close(ended) }) // before proxy.Close, which waits for them
	s := open(t, dynamo.Options{Endpoint: proxy.URL, CallTimeout: 3 * time.Second,
		Breaker: dynamo.BreakerOptions{ConsecutiveFailures: 2, OpenFor: 500 * time.Millisecond, Probes: 1}})
	ctx := context.Background()
	now := time.Now().UTC()
	conv := "g:faults"
	if err := s.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Group, Name: "faults", CreatedAt: now}, []server.Participant{
		{ConversationID: conv, UserID: "alice", Role: wire.RoleAdmin, JoinedAt: now},
		{ConversationID: conv, UserID: "bob", Role: wire.RoleMember, JoinedAt: now}}); err != nil {
		t.Fatal(err)
	}
	svc, err := server.New(server.Config{Backends: server.Backends{Store: s, Sequencer: inmem.NewSequencer(), Rate: inmem.NewRateLimiter(time.Now),
		Inbox: inmem.NewInboxIndex(100), Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now),
		Registry: inmem.NewRegistry(), Broker: inmem.NewBroker()},
		PasswordCost: 4, Registration: server.RegistrationOpen, SendRate: -1, RedeliverAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(context.Background()) })
	// first_try: no look-up before the write, so the transaction is the one call a send makes.
	send := func(id string) (wire.SendResponse, bool, error) {
		return svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "text of " + id, FirstTry: true}, nil)
	}
	code := func(what string, err error, want wire.Code) {
		t.Helper()
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != want {
			t.Fatalf("%s: %v, want %s", what, err, want)
		}
	}
	if _, _, err := send("ok-1"); err != nil {
		t.Fatal(err)
	}
	lose.Store(true)
	_, _, err = send("lost-1")
	code("a transaction whose answer was lost", err, wire.CodeMaybeStored)
	_, _, err = send("lost-2")
	code("the transaction whose failure opens the circuit", err, wire.CodeMaybeStored)
	// The breaker counts a timeout once no call was answered for a grace
	// after it (slowcalls.go): none is, so it opens then.
	testenv.WaitFor(t, 15*time.Second, func() bool { return s.BreakerState() == gobreaker.StateOpen })
	_, _, err = send("refused-1")
	code("a send refused by the open circuit", err, wire.CodeUnavailable)

	lose.Store(false)
	ids := []string{"ok-1", "lost-1", "lost-2", "refused-1"}
	testenv.WaitFor(t, 10*time.Second, func() bool { // the circuit lets a probe through after OpenFor
		_, _, err := send(ids[1])
		return err == nil
	})
	for _, id := range ids {
		r, created, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: id, Content: "text of " + id}, nil)
		if err != nil || created != (id == "refused-1") {
			t.Fatalf("resend %s: %+v created=%v err=%v; only refused-1 was not stored before", id, r, created, err)
		}
	}
	msgs, err := s.ListMessagesAfter(ctx, conv, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.MessageID)
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Fatalf("stored %v, want %v: each once, in the order sent", got, ids)
	}

	// A reaction reads its target before its transaction: a read that times
	// out leaves nothing written.
	hangReads.Store(true)
	react := wire.SendRequest{MessageID: "react-1", Kind: wire.KindReaction, TargetSeq: msgs[0].SeqNo, Content: "👍", FirstTry: true}
	_, _, err = svc.Send(ctx, "bob", conv, react, nil)
	code("a reaction whose target read timed out", err, wire.CodeUnavailable)
	hangReads.Store(false)
	testenv.WaitFor(t, 10*time.Second, func() bool {
		_, _, err := svc.Send(ctx, "bob", conv, react, nil)
		return err == nil
	})
}
