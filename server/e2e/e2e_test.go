// Package e2e runs the server end to end: an in-process chatserver (servertest)
// and real HTTP and WebSocket clients. With CHATSERVER_TEST_BACKEND=production the
// same tests run on DynamoDB, Redis and S3.
package e2e

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

func TestDirectChatTicks(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	if conv != "dm:alice:bob" || bob.direct("alice") != conv {
		t.Fatalf("direct conversation ids differ: %s", conv)
	}
	aws, bws := dial(t, alice), dial(t, bob)

	sent := aws.sendWait(conv, "m1", "hi bob")
	if sent.SeqNo != 1 || sent.MessageID != "m1" || sent.Timestamp.IsZero() {
		t.Fatalf("sent = %+v", sent)
	}
	if got := tick(alice.status(conv), "alice", 1); got != "single" {
		t.Fatalf("tick after store = %s, want single", got)
	}
	m := bws.next(isMessage(conv)).Message
	if m.SeqNo != 1 || m.Content != "hi bob" || m.SenderID != "alice" || m.MessageID != "m1" {
		t.Fatalf("bob got %+v", m)
	}
	bws.write(wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: 1})
	st := aws.next(isStatus(conv, "bob")).Status
	if st.LastDeliveredSeq != 1 || st.LastReadSeq != 0 {
		t.Fatalf("status after ack: %+v", st)
	}
	if got := tick(alice.status(conv), "alice", 1); got != "double" {
		t.Fatalf("tick after delivery = %s, want double", got)
	}
	bws.write(wire.Frame{Type: wire.TypeRead, ConversationID: conv, SeqNo: 1})
	st = aws.next(isStatus(conv, "bob")).Status
	if st.LastReadSeq != 1 {
		t.Fatalf("status after read: %+v", st)
	}
	if got := tick(alice.status(conv), "alice", 1); got != "blue" {
		t.Fatalf("tick after read = %s, want blue", got)
	}
	// The sender's socket gets the "sent" answer, not a copy of its own message.
	aws.quiet(isMessage(conv), 100*time.Millisecond)
}

func TestFirstMessageCreatesDirectConversation(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")
	// No POST /v1/conversations first: sending is enough.
	if r := alice.send(conv, "first", "hi"); r.SeqNo != 1 {
		t.Fatalf("first message has seq %d, want 1", r.SeqNo)
	}
	var in wire.InboxResponse
	bob.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 1 || in.Conversations[0].Peer != "alice" || in.Conversations[0].Unread != 1 {
		t.Fatalf("bob's inbox: %+v", in.Conversations)
	}
	var e wire.ErrorResponse
	if st := alice.do("POST", "/v1/conversations/dm:alice:nobody/messages", wire.SendRequest{MessageID: "x", Content: "hi"}, &e); st != 404 {
		t.Fatalf("to an unknown user: %d", st)
	}
}

func TestImplicitReadOnReply(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	alice.send(conv, "a1", "one")
	alice.send(conv, "a2", "two")
	if got := tick(alice.status(conv), "alice", 2); got != "single" {
		t.Fatalf("before reply: %s", got)
	}
	r := bob.send(conv, "b1", "reply")
	if r.SeqNo != 3 {
		t.Fatalf("reply seq = %d", r.SeqNo)
	}
	st := alice.status(conv)
	if st["bob"].LastReadSeq != 3 || st["bob"].LastDeliveredSeq != 3 {
		t.Fatalf("bob's boundaries after his reply: %+v", st["bob"])
	}
	for seq := int64(1); seq <= 2; seq++ {
		if got := tick(st, "alice", seq); got != "blue" {
			t.Fatalf("message %d tick = %s after reply, want blue", seq, got)
		}
	}
	// Alice has not read bob's reply yet.
	if st["alice"].LastReadSeq != 2 {
		t.Fatalf("alice read = %d, want 2", st["alice"].LastReadSeq)
	}
}

func TestGroupTicksAndFanout(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	conv := alice.group("team", "bob", "carol")
	if !strings.HasPrefix(conv, wire.GroupPrefix) {
		t.Fatalf("group id %q", conv)
	}
	aws, bws, cws := dial(t, alice), dial(t, bob), dial(t, carol)
	sent := aws.sendWait(conv, "g1", "hello team")
	for _, c := range []*wsClient{bws, cws} {
		if m := c.next(isMessage(conv)).Message; m.SeqNo != sent.SeqNo || m.Content != "hello team" {
			t.Fatalf("member got %+v", m)
		}
	}
	bws.write(wire.Frame{Type: wire.TypeRead, ConversationID: conv, SeqNo: 1})
	aws.next(isStatus(conv, "bob"))
	// One member read it, the other has not even received it: still a single tick.
	if got := tick(alice.status(conv), "alice", 1); got != "single" {
		t.Fatalf("group tick with carol behind = %s, want single", got)
	}
	cws.write(wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: 1})
	aws.next(isStatus(conv, "carol"))
	if got := tick(alice.status(conv), "alice", 1); got != "double" {
		t.Fatalf("group tick = %s, want double", got)
	}
	cws.write(wire.Frame{Type: wire.TypeRead, ConversationID: conv, SeqNo: 1})
	aws.next(isStatus(conv, "carol"))
	if got := tick(alice.status(conv), "alice", 1); got != "blue" {
		t.Fatalf("group tick = %s, want blue", got)
	}
	// The conversation carries its preview.
	var c wire.Conversation
	alice.do("GET", "/v1/conversations/"+conv, nil, &c)
	if c.Name != "team" || c.LastMessageBody != "hello team" || c.LastMessageSender != "alice" || len(c.Participants) != 3 {
		t.Fatalf("conversation %+v", c)
	}
}

func TestMultiDevice(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	a1, a2 := dial(t, alice), dial(t, alice)
	b1 := dial(t, bob)
	b1.sendWait(conv, "b1", "to both of alice's terminals")
	for _, c := range []*wsClient{a1, a2} {
		if m := c.next(isMessage(conv)).Message; m.MessageID != "b1" {
			t.Fatalf("device got %+v", m)
		}
	}
	// A message sent from one device reaches the user's other device.
	a1.sendWait(conv, "a1", "from terminal one")
	if m := a2.next(isMessage(conv)).Message; m.MessageID != "a1" || m.SenderID != "alice" {
		t.Fatalf("other device got %+v", m)
	}
}

func TestOfflineDeviceCatchesUpInOrder(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	group := alice.group("g", "bob")
	const n = 30
	for i := 1; i <= n; i++ {
		alice.send(conv, fmt.Sprintf("d%d", i), fmt.Sprintf("direct %d", i))
		if i%3 == 0 {
			alice.send(group, fmt.Sprintf("g%d", i), fmt.Sprintf("group %d", i))
		}
	}
	bws := dial(t, bob)
	seen := map[string][]int64{}
	for len(seen[conv]) < n || len(seen[group]) < n/3 {
		f := bws.next(func(f wire.Frame) bool { return f.Type == wire.TypeMessage })
		seen[f.Message.ConversationID] = append(seen[f.Message.ConversationID], f.Message.SeqNo)
	}
	for c, seqs := range seen {
		for i, s := range seqs {
			if s != int64(i+1) {
				t.Fatalf("%s: caught up out of order or with a gap: %v", c, seqs)
			}
		}
	}
	// Acking clears pending_deliveries: a new connection gets nothing again.
	bws.write(wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: n})
	bws.write(wire.Frame{Type: wire.TypeAck, ConversationID: group, SeqNo: n / 3})
	bws.write(wire.Frame{Type: wire.TypePing, ID: "p"})
	bws.next(func(f wire.Frame) bool { return f.Type == wire.TypePong })
	testenv.WaitFor(t, wait, func() bool {
		return alice.status(conv)["bob"].LastDeliveredSeq == n && alice.status(group)["bob"].LastDeliveredSeq == n/3
	})
	again := dial(t, bob)
	again.quiet(func(f wire.Frame) bool { return f.Type == wire.TypeMessage }, 200*time.Millisecond)

	// A device that was offline can also sync from its own cursor.
	again.write(wire.Frame{Type: wire.TypeSync, ID: "s1", Cursors: []wire.Cursor{{ConversationID: conv, SeqNo: n - 5}}})
	var got []int64
	for {
		f := again.next(func(f wire.Frame) bool { return f.Type == wire.TypeMessage || f.Type == wire.TypeSynced })
		if f.Type == wire.TypeSynced {
			break
		}
		got = append(got, f.Message.SeqNo)
	}
	if !slices.Equal(got, []int64{n - 4, n - 3, n - 2, n - 1, n}) {
		t.Fatalf("sync after %d gave %v", n-5, got)
	}
}

func TestLiveMessagesDuringCatchUpKeepOrder(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	for i := 1; i <= 300; i++ {
		alice.send(conv, fmt.Sprintf("old%d", i), "backlog")
	}
	aws := dial(t, alice)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 50; i++ {
			aws.send(conv, fmt.Sprintf("new%d", i), "live")
		}
	}()
	bws := dial(t, bob)
	var last int64
	seen := map[int64]bool{}
	for len(seen) < 350 {
		m := bws.next(isMessage(conv)).Message
		if seen[m.SeqNo] {
			continue // at-least-once: duplicates are allowed, reordering is not
		}
		if m.SeqNo < last {
			t.Fatalf("seq %d arrived after %d", m.SeqNo, last)
		}
		last = m.SeqNo
		seen[m.SeqNo] = true
	}
	<-done
}

func TestDuplicateSendStoredOnce(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	bws := dial(t, bob)
	first := alice.send(conv, "same-id", "hello")
	var again wire.SendResponse
	if st := alice.do("POST", "/v1/conversations/"+conv+"/messages", wire.SendRequest{MessageID: "same-id", Content: "hello"}, &again); st != http.StatusOK {
		t.Fatalf("resend status %d, want 200", st)
	}
	if !reflect.DeepEqual(again, first) {
		t.Fatalf("resend answered %+v, first %+v", again, first)
	}
	aws := dial(t, alice)
	if f := aws.sendWait(conv, "same-id", "hello"); f.SeqNo != first.SeqNo {
		t.Fatalf("websocket resend got seq %d, want %d", f.SeqNo, first.SeqNo)
	}
	if h := alice.history(conv, 0, 100); len(h.Messages) != 1 {
		t.Fatalf("stored %d messages, want 1", len(h.Messages))
	}
	bws.next(isMessage(conv))
	bws.quiet(isMessage(conv), 200*time.Millisecond) // delivered once
}

func TestConcurrentSendersUniqueIncreasingSeq(t *testing.T) {
	srv := servertest.Start(t)
	users := []string{"u1", "u2", "u3", "u4"}
	apis := map[string]*api{}
	for _, u := range users {
		apis[u] = register(t, srv, u)
	}
	conv := apis["u1"].group("busy", "u2", "u3", "u4")
	const per = 40
	var wg sync.WaitGroup
	seqs := make(map[string][]int64)
	var mu sync.Mutex
	for _, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, apis[u])
			for i := range per {
				f := c.sendWait(conv, fmt.Sprintf("%s-%d", u, i), fmt.Sprintf("%s says %d", u, i))
				mu.Lock()
				seqs[u] = append(seqs[u], f.SeqNo)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	all := map[int64]string{}
	for u, ss := range seqs {
		for i, s := range ss {
			if i > 0 && s <= ss[i-1] {
				t.Fatalf("%s's seqs not increasing: %v", u, ss)
			}
			if other, dup := all[s]; dup {
				t.Fatalf("seq %d given to %s and %s", s, other, u)
			}
			all[s] = u
		}
	}
	if len(all) != per*len(users) {
		t.Fatalf("%d seqs, want %d", len(all), per*len(users))
	}
	// The stored history holds exactly those, each once, in order.
	var got []int64
	for before := int64(0); ; {
		h := apis["u1"].history(conv, before, 100)
		for _, m := range h.Messages {
			got = append(got, m.SeqNo)
		}
		if h.NextBeforeSeq == 0 {
			break
		}
		before = h.NextBeforeSeq
	}
	if len(got) != per*len(users) {
		t.Fatalf("history has %d messages", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] >= got[i-1] {
			t.Fatalf("history not newest first at %d: %v", i, got[i-1:i+1])
		}
	}
}

func TestPaginationNoGapNoRepeat(t *testing.T) {
	srv := servertest.Start(t)
	alice, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	const n = 47
	for i := 1; i <= n; i++ {
		alice.send(conv, fmt.Sprintf("m%d", i), fmt.Sprintf("message %d", i))
	}
	var first wire.HistoryResponse
	if st := alice.do("GET", "/v1/conversations/"+conv+"/messages", nil, &first); st != 200 {
		t.Fatalf("default page: %d", st)
	}
	if len(first.Messages) != wire.DefaultPageSize || first.Messages[0].SeqNo != n {
		t.Fatalf("first page: %d messages from %d", len(first.Messages), first.Messages[0].SeqNo)
	}
	var got []int64
	before := int64(0)
	pages := 0
	for {
		h := alice.history(conv, before, 20)
		pages++
		for _, m := range h.Messages {
			got = append(got, m.SeqNo)
			if m.Content != fmt.Sprintf("message %d", m.SeqNo) {
				t.Fatalf("seq %d holds %q", m.SeqNo, m.Content)
			}
		}
		if h.NextBeforeSeq == 0 {
			break
		}
		before = h.NextBeforeSeq
	}
	if pages != 3 || len(got) != n {
		t.Fatalf("%d pages, %d messages", pages, len(got))
	}
	for i, s := range got {
		if s != int64(n-i) {
			t.Fatalf("gap or repeat at %d: %v", i, got)
		}
	}
	var bad wire.ErrorResponse
	if st := alice.do("GET", "/v1/conversations/"+conv+"/messages?limit=101", nil, &bad); st != 400 || bad.Error.Code != wire.CodeInvalid {
		t.Fatalf("limit 101: %d %+v", st, bad.Error)
	}
	if st := alice.do("GET", "/v1/conversations/"+conv+"/messages?before_seq=abc", nil, &bad); st != 400 {
		t.Fatalf("before_seq=abc: %d", st)
	}
}

func TestRestartLosesNothingAcknowledged(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.NoSync = false }))
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	aws := dial(t, alice)
	var acked []int64
	for i := 1; i <= 20; i++ {
		acked = append(acked, aws.sendWait(conv, fmt.Sprintf("m%d", i), fmt.Sprintf("before restart %d", i)).SeqNo)
	}
	srv.Restart(t)
	// Tokens, conversations and messages survived.
	h := alice.history(conv, 0, 100)
	if len(h.Messages) != len(acked) {
		t.Fatalf("after restart: %d messages, want %d", len(h.Messages), len(acked))
	}
	// The sequence continues above what was stored (the in-memory counter is gone).
	if r := bob.send(conv, "after", "after restart"); r.SeqNo != int64(len(acked)+1) {
		t.Fatalf("first seq after restart = %d, want %d", r.SeqNo, len(acked)+1)
	}
	// Bob, offline the whole time, gets everything in order.
	bws := dial(t, bob)
	for i := 1; i <= len(acked); i++ {
		if m := bws.next(isMessage(conv)).Message; m.SeqNo != int64(i) {
			t.Fatalf("bob got seq %d, want %d", m.SeqNo, i)
		}
	}
}

func TestOutsiderRefused(t *testing.T) {
	srv := servertest.Start(t)
	alice, _, eve := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "eve")
	conv := alice.direct("bob")
	group := alice.group("secret", "bob")
	alice.send(conv, "m1", "private")
	alice.send(group, "g1", "private too")
	for _, c := range []string{conv, group} {
		for _, req := range []struct{ method, path string }{
			{"GET", "/v1/conversations/" + c + "/messages"},
			{"GET", "/v1/conversations/" + c},
			{"GET", "/v1/conversations/" + c + "/status"},
		} {
			var e wire.ErrorResponse
			if st := eve.do(req.method, req.path, nil, &e); st != http.StatusForbidden || e.Error.Code != wire.CodeForbidden {
				t.Fatalf("eve %s %s: %d %+v", req.method, req.path, st, e.Error)
			}
		}
		var e wire.ErrorResponse
		if st := eve.do("POST", "/v1/conversations/"+c+"/messages", wire.SendRequest{MessageID: "x", Content: "hi"}, &e); st != http.StatusForbidden {
			t.Fatalf("eve send: %d", st)
		}
		if st := eve.do("POST", "/v1/conversations/"+c+"/read", wire.SeqRequest{SeqNo: 1}, &e); st != http.StatusForbidden {
			t.Fatalf("eve read: %d", st)
		}
	}
	ews := dial(t, eve)
	id := ews.send(conv, "x", "let me in")
	f := ews.next(func(f wire.Frame) bool { return f.ID == id })
	if f.Type != wire.TypeError || f.Error.Code != wire.CodeForbidden {
		t.Fatalf("eve's websocket send: %+v", f)
	}
	ews.write(wire.Frame{Type: wire.TypeSync, ID: "s", Cursors: []wire.Cursor{{ConversationID: group, SeqNo: 0}}})
	ews.quiet(isMessage(group), 200*time.Millisecond)
	if h := alice.history(conv, 0, 100); len(h.Messages) != 1 {
		t.Fatalf("outsider changed history: %d", len(h.Messages))
	}
	// No token, or a bad one.
	anon := &api{t: t, base: srv.URL}
	var e wire.ErrorResponse
	if st := anon.do("GET", "/v1/inbox", nil, &e); st != http.StatusUnauthorized || e.Error.Code != wire.CodeUnauthorized {
		t.Fatalf("no token: %d %+v", st, e.Error)
	}
	anon.token = "forged"
	if st := anon.do("GET", "/v1/ws", nil, &e); st != http.StatusUnauthorized {
		t.Fatalf("forged token on ws: %d", st)
	}
}

func TestBadInput(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.MaxMessageBytes = 100 }))
	alice, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	cases := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		code   wire.Code
	}{
		{"ErrTooLarge", "POST", "/v1/conversations/" + conv + "/messages", wire.SendRequest{MessageID: "big", Content: strings.Repeat("x", 101)}, 413, wire.CodeTooLarge},
		{"ErrEmptyContent", "POST", "/v1/conversations/" + conv + "/messages", wire.SendRequest{MessageID: "e"}, 400, wire.CodeInvalid},
		{"ErrNoMessageID", "POST", "/v1/conversations/" + conv + "/messages", wire.SendRequest{Content: "x"}, 400, wire.CodeInvalid},
		{"ErrUnknownField", "POST", "/v1/conversations/" + conv + "/messages", map[string]string{"message_id": "m", "content": "x", "typo": "1"}, 400, wire.CodeInvalid},
		{"ErrBadConversationID", "POST", "/v1/conversations/nope/messages", wire.SendRequest{MessageID: "m", Content: "x"}, 400, wire.CodeInvalid},
		{"ErrUnknownGroup", "GET", "/v1/conversations/g:none/messages", nil, 403, wire.CodeForbidden},
		{"ErrUnknownPeer", "POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"nobody"}}, 404, wire.CodeNotFound},
		{"ErrBadType", "POST", "/v1/conversations", wire.CreateConversationRequest{Type: "channel", Members: []string{"bob"}}, 400, wire.CodeInvalid},
		// A direct conversation with yourself is a note to self (TestNoteToSelf);
		// one with two others is a group.
		{"ErrDirectWithTwo", "POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob", "alice"}}, 400, wire.CodeInvalid},
		{"ErrNegativeRead", "POST", "/v1/conversations/" + conv + "/read", wire.SeqRequest{SeqNo: -1}, 400, wire.CodeInvalid},
		{"ErrDuplicateUser", "POST", "/v1/register", wire.RegisterRequest{UserID: "bob", Password: "password-x"}, 409, wire.CodeConflict},
		{"ErrBadUserID", "POST", "/v1/register", wire.RegisterRequest{UserID: "Bad Name", Password: "password-x"}, 400, wire.CodeInvalid},
		{"ErrShortPassword", "POST", "/v1/register", wire.RegisterRequest{UserID: "carl", Password: "short"}, 400, wire.CodeInvalid},
		{"ErrWrongMethod", "DELETE", "/v1/inbox", nil, 400, wire.CodeInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e wire.ErrorResponse
			if st := alice.do(tc.method, tc.path, tc.body, &e); st != tc.status || e.Error == nil || e.Error.Code != tc.code || e.Error.Message == "" {
				t.Fatalf("status %d error %+v, want %d %s", st, e.Error, tc.status, tc.code)
			}
		})
	}
	// Malformed JSON.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/login", strings.NewReader(`{"user_id":`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("malformed JSON: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	// Nothing was stored by any of it.
	if h := alice.history(conv, 0, 100); len(h.Messages) != 0 {
		t.Fatalf("bad input stored %d messages", len(h.Messages))
	}
	// Bad frames get error frames and the connection stays usable.
	ws := dial(t, alice)
	for _, raw := range []string{`{"type":`, `{"type":"launch"}`, `{"type":"ack","conversation_id":"dm:alice:bob","seq_no":0}`} {
		ws.writeRaw(raw)
		if f := ws.next(func(f wire.Frame) bool { return true }); f.Type != wire.TypeError || f.Error.Code != wire.CodeInvalid {
			t.Fatalf("frame %s answered %+v", raw, f)
		}
	}
	id := ws.send(conv, "big", strings.Repeat("y", 101))
	if f := ws.next(func(f wire.Frame) bool { return f.ID == id }); f.Type != wire.TypeError || f.Error.Code != wire.CodeTooLarge {
		t.Fatalf("large message over ws: %+v", f)
	}
	if f := ws.sendWait(conv, "ok", "still works"); f.SeqNo != 1 {
		t.Fatalf("after bad frames: %+v", f)
	}
}

func TestRateLimit(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.SendRate = 3 }))
	alice, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	ws := dial(t, alice)
	var limited *wire.Frame
	for i := range 10 {
		id := ws.send(conv, fmt.Sprintf("m%d", i), "spam")
		f := ws.next(func(f wire.Frame) bool { return f.ID == id })
		if f.Type == wire.TypeError {
			limited = &f
			break
		}
	}
	if limited == nil || limited.Error.Code != wire.CodeRateLimited || limited.Error.RetryAfterMs <= 0 || limited.Error.RetryAfterMs > 1000 {
		t.Fatalf("no rate-limit error frame with a retry hint: %+v", limited)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/v1/conversations/"+conv+"/messages", strings.NewReader(`{"message_id":"h","content":"x"}`))
	req.Header.Set("Authorization", "Bearer "+alice.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("HTTP over the limit: %d Retry-After=%q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	time.Sleep(1100 * time.Millisecond)
	if f := ws.sendWait(conv, "later", "after the window"); f.SeqNo == 0 {
		t.Fatal("send after the window failed")
	}
}

func TestInboxAndUnread(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	ab := bob.direct("alice")
	bob.send(ab, "b1", "one")
	bob.send(ab, "b2", "two")
	g := carol.group("book club", "alice", "bob")
	carol.send(g, "c1", "newest")
	var in wire.InboxResponse
	alice.do("GET", "/v1/inbox", nil, &in)
	if len(in.Conversations) != 2 || in.Conversations[0].ConversationID != g || in.Conversations[1].ConversationID != ab {
		t.Fatalf("inbox order: %+v", in.Conversations)
	}
	e := in.Conversations[1]
	if e.Unread != 2 || e.Peer != "bob" || e.LastMessageBody != "two" || e.Type != wire.Direct {
		t.Fatalf("direct entry: %+v", e)
	}
	if gr := in.Conversations[0]; gr.Name != "book club" || gr.Type != wire.Group || gr.Unread != 1 || gr.LastMessageSender != "carol" {
		t.Fatalf("group entry: %+v", gr)
	}
	alice.do("POST", "/v1/conversations/"+ab+"/read", wire.SeqRequest{SeqNo: 2}, nil)
	bob.send(ab, "b3", "three")
	alice.do("GET", "/v1/inbox", nil, &in)
	if in.Conversations[0].ConversationID != ab || in.Conversations[0].Unread != 1 {
		t.Fatalf("after read and new message: %+v", in.Conversations[0])
	}
	// A read past the end is clamped: it cannot mark future messages read.
	var st wire.MemberStatus
	alice.do("POST", "/v1/conversations/"+ab+"/read", wire.SeqRequest{SeqNo: 1000}, &st)
	if st.LastReadSeq != 3 {
		t.Fatalf("read 1000 moved to %d, want 3", st.LastReadSeq)
	}
}

func TestGroupMembership(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	g := alice.group("g", "bob")
	cws := dial(t, carol)
	var c wire.Conversation
	var e wire.ErrorResponse
	if st := bob.do("POST", "/v1/conversations/"+g+"/members", wire.MembersRequest{Members: []string{"carol"}}, &e); st != 403 {
		t.Fatalf("non-admin add: %d", st)
	}
	if st := alice.do("POST", "/v1/conversations/"+g+"/members", wire.MembersRequest{Members: []string{"carol"}}, &c); st != 200 || len(c.Participants) != 3 {
		t.Fatalf("admin add: %d %+v", st, c)
	}
	if f := cws.next(func(f wire.Frame) bool { return f.Type == wire.TypeConversation }); f.Conv.ConversationID != g {
		t.Fatalf("carol was not told: %+v", f)
	}
	alice.send(g, "m1", "welcome carol")
	cws.next(isMessage(g))
	if st := alice.do("DELETE", "/v1/conversations/"+g+"/members/carol", nil, nil); st != 204 {
		t.Fatalf("remove: %d", st)
	}
	if st := carol.do("POST", "/v1/conversations/"+g+"/messages", wire.SendRequest{MessageID: "x", Content: "still here?"}, &e); st != 403 {
		t.Fatalf("removed member sent: %d", st)
	}
	if st := bob.do("DELETE", "/v1/conversations/"+g+"/members/bob", nil, nil); st != 204 {
		t.Fatalf("leave: %d", st)
	}
}

func TestRegistrationModes(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.Registration = "invite" }))
	admin := register(t, srv, "admin") // the first account is always allowed
	anon := &api{t: t, base: srv.URL}
	var e wire.ErrorResponse
	if st := anon.do("POST", "/v1/register", wire.RegisterRequest{UserID: "bob", Password: "password-bob"}, &e); st != 403 {
		t.Fatalf("register without invite: %d", st)
	}
	var inv wire.InviteResponse
	if st := admin.do("POST", "/v1/invites", nil, &inv); st != 201 || inv.Code == "" {
		t.Fatalf("invite: %d", st)
	}
	var auth wire.AuthResponse
	if st := anon.do("POST", "/v1/register", wire.RegisterRequest{UserID: "bob", Password: "password-bob", InviteCode: inv.Code}, &auth); st != 201 || auth.Admin {
		t.Fatalf("register with invite: %d %+v", st, auth)
	}
	if st := anon.do("POST", "/v1/register", wire.RegisterRequest{UserID: "carol", Password: "password-c", InviteCode: inv.Code}, &e); st != 403 {
		t.Fatalf("invite reused: %d", st)
	}
	bob := &api{t: t, base: srv.URL, token: auth.Token, user: "bob"}
	if st := bob.do("POST", "/v1/invites", nil, &e); st != 403 {
		t.Fatalf("non-admin invite: %d", st)
	}
	// Login, profile, logout.
	var login wire.AuthResponse
	if st := anon.do("POST", "/v1/login", wire.LoginRequest{UserID: "bob", Password: "wrong-password"}, &e); st != 401 {
		t.Fatalf("wrong password: %d", st)
	}
	if st := anon.do("POST", "/v1/login", wire.LoginRequest{UserID: "bob", Password: "password-bob"}, &login); st != 200 || login.Token == "" {
		t.Fatalf("login: %d", st)
	}
	name := "Bob B."
	var p wire.Profile
	bob.do("PATCH", "/v1/me", wire.ProfileUpdate{DisplayName: &name}, &p)
	admin.do("GET", "/v1/users/bob", nil, &p)
	if p.DisplayName != name {
		t.Fatalf("profile after update: %+v", p)
	}
	if st := bob.do("POST", "/v1/logout", nil, nil); st != 204 {
		t.Fatalf("logout: %d", st)
	}
	if st := bob.do("GET", "/v1/me", nil, &e); st != 401 {
		t.Fatalf("token after logout: %d", st)
	}
}

// One sync answers many small conversations at once: the budget counts the
// messages sent, not a page per conversation.
func TestSyncManyConversationsInOneRound(t *testing.T) {
	srv := servertest.Start(t)
	alice := register(t, srv, "alice")
	var cursors []wire.Cursor
	for i := range 12 {
		peer := fmt.Sprintf("peer%02d", i)
		p := register(t, srv, peer)
		conv := p.direct("alice")
		p.send(conv, "m1", "hello from "+peer)
		cursors = append(cursors, wire.Cursor{ConversationID: conv, SeqNo: 0})
	}
	ws := dial(t, alice)
	// The pending backlog arrives first, acked as a client does (unacked, a
	// slow run's redelivery would mix into the sync); then an explicit sync
	// from zero.
	for range 12 {
		f := ws.next(func(f wire.Frame) bool { return f.Type == wire.TypeMessage })
		ws.write(wire.Frame{Type: wire.TypeAck, ConversationID: f.Message.ConversationID, SeqNo: f.Message.SeqNo})
	}
	ws.write(wire.Frame{Type: wire.TypeSync, ID: "s", Cursors: cursors})
	// Delivery is at least once: a redelivery already on its way may arrive
	// beside the sync's answer, so what counts is that every conversation
	// came in this one round.
	got := map[string]bool{}
	for {
		f := ws.next(func(f wire.Frame) bool { return f.Type == wire.TypeMessage || f.Type == wire.TypeSynced })
		if f.Type == wire.TypeSynced {
			if f.More {
				t.Fatalf("12 one-message conversations needed another round (got %d)", len(got))
			}
			break
		}
		got[f.Message.ConversationID] = true
	}
	if len(got) != 12 {
		t.Fatalf("sync sent messages of %d conversations, want 12", len(got))
	}
}
