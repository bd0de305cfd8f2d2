package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/wire"
)

// call makes one authenticated JSON request and returns its status and body.
func call(t *testing.T, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, url, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// errorCode is the code of a JSON error answer ("" if it is not one).
func errorCode(b []byte) wire.Code {
	var e struct {
		Error wire.Error `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// TestDynamoOutageKeepsCachedReads: two nodes on Redis and DynamoDB, with
// DynamoDB made unreachable for both (a proxy in front of the shared test
// server, stopped) for longer than the token cache's TTL. What the caches can
// answer keeps answering: requests authenticated by tokens the nodes checked
// before, profiles (Redis), typing carried to the other node's socket (Redis
// pub/sub), the inbox from each user's copy of it (marked stale; a group the
// user was removed from before the outage is not in it; a user with no copy is
// answered unavailable, never from another's), presence in a direct
// conversation, and in a group from a node's member cache (never to a member
// removed before the outage, on a node whose list had them); every other read
// of the client and the CLI is answered unavailable (outageReads), a socket's
// sync as failed (error, then synced with more). A send is answered
// unavailable or maybe_stored,
// and stores nothing. Each
// node logs the outage in one WARN and its end in one INFO, and nothing else
// above INFO; when DynamoDB returns, the resend with the same message_id is
// stored once, after the message before the outage, and reaches the socket.
func TestDynamoOutageKeepsCachedReads(t *testing.T) {
	redisAddr := testenv.RedisAddr(t)
	proxy := testenv.NewProxy(t, testenv.DynamoEndpoint(t))
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	prod := node.Production{DynamoEndpoint: proxy.URL(), DynamoRegion: "t" + id[:8], TablePrefix: "outage-" + id + "-",
		CreateTables: true, RedisAddrs: []string{redisAddr}, RedisPrefix: "outage:" + id + ":"}
	t.Cleanup(func() {
		ctx := context.Background()
		if st, err := dynamo.Open(ctx, dynamo.Options{Region: prod.DynamoRegion, Endpoint: testenv.DynamoEndpoint(t), TablePrefix: prod.TablePrefix}); err == nil {
			_ = st.DeleteTables(ctx)
		}
		dropKeys(t, redisAddr, prod.RedisPrefix)
	})
	const tokenTTL = time.Second
	logs := map[string]*testenv.LogBuffer{}
	start := func(nodeID string) *node.Node {
		logs[nodeID] = new(testenv.LogBuffer)
		n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
			Registration: "open", NodeID: nodeID, Production: prod, TokenCacheTTL: tokenTTL,
			Logger: slog.New(slog.NewTextHandler(logs[nodeID], &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a, bn := start("node-a"), start("node-b")
	alice, bob := register(t, a.URL(), "alice"), register(t, bn.URL(), "bob")
	conv := wire.DirectConversationID("alice", "bob")
	if st, body := call(t, "POST", a.URL()+"/v1/conversations", alice, wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}); st/100 != 2 {
		t.Fatalf("create conversation: %d %s", st, body)
	}
	send(t, a, alice, conv, "before")
	// A group of the three, with a message; bob reads his inbox (so his
	// copy lists the group) and is then removed from it: his copy must not
	// show it during the outage. Carol never reads hers: she has no copy,
	// and must not be answered from anyone else's.
	carol := register(t, a.URL(), "carol")
	st, body := call(t, "POST", a.URL()+"/v1/conversations", alice, wire.CreateConversationRequest{Type: wire.Group, Name: "crew", Members: []string{"bob", "carol"}})
	var group wire.Conversation
	if st/100 != 2 || json.Unmarshal(body, &group) != nil {
		t.Fatalf("create group: %d %s", st, body)
	}
	// A long message: the copy keeps a preview of it (256 bytes, whole
	// runes), not all of it.
	long := strings.Repeat("é", 1000)
	if st, body := call(t, "POST", a.URL()+"/v1/conversations/"+group.ConversationID+"/messages", alice, wire.SendRequest{MessageID: "to-the-crew", Content: long}); st/100 != 2 {
		t.Fatalf("send to the group: %d %s", st, body)
	}
	if st, body := call(t, "GET", bn.URL()+"/v1/inbox", bob, nil); st != 200 || !strings.Contains(string(body), group.ConversationID) {
		t.Fatalf("bob's inbox before his removal: %d %s", st, body)
	}
	groupPresence := func(n *node.Node, token string) (int, []byte) {
		return call(t, "GET", n.URL()+"/v1/conversations/"+group.ConversationID+"/presence", token, nil)
	}
	// Node-b caches the group's members with bob among them; his removal on
	// node-a must reach that cache, or node-b would answer bob from it for
	// as long as the outage lasts.
	if st, body := groupPresence(bn, carol); st != 200 || !strings.Contains(string(body), `"bob"`) {
		t.Fatalf("carol's group presence on node-b: %d %s", st, body)
	}
	if st, body := call(t, "DELETE", a.URL()+"/v1/conversations/"+group.ConversationID+"/members/bob", alice, nil); st/100 != 2 {
		t.Fatalf("remove bob: %d %s", st, body)
	}
	if st, body := groupPresence(a, alice); st != 200 || strings.Contains(string(body), `"bob"`) {
		t.Fatalf("alice's group presence on node-a after bob's removal: %d %s", st, body)
	}
	membersCached := time.Now()
	if st, body := call(t, "GET", a.URL()+"/v1/users/carol", carol, nil); st != 200 {
		t.Fatalf("carol's profile: %d %s", st, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, strings.Replace(bn.URL(), "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + bob}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	frames := make(chan wire.Frame, 64)
	go func() {
		defer close(frames)
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			for line := range wire.Frames(data) {
				if f, err := wire.DecodeFrame(line); err == nil {
					frames <- f
				}
			}
		}
	}()
	// Bob's socket is registered once alice's typing reaches it across nodes.
	typing := func() bool {
		f, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeTyping, ConversationID: conv})
		aws, _, err := websocket.Dial(ctx, strings.Replace(a.URL(), "http", "ws", 1)+"/v1/ws",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + alice}}})
		if err != nil {
			t.Logf("alice's socket: %v", err)
			return false
		}
		defer aws.CloseNow()
		if err := aws.Write(ctx, websocket.MessageText, f); err != nil {
			return false
		}
		deadline := time.After(2 * time.Second)
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatal("bob's socket closed")
				}
				if f.Type == wire.TypeTyping && f.UserID == "alice" {
					return true
				}
			case <-deadline:
				return false
			}
		}
	}
	testenv.WaitFor(t, 20*time.Second, typing)
	// Warm what the outage may use: both tokens on both nodes, both profiles
	// in Redis, alice's inbox.
	for _, n := range []*node.Node{a, bn} {
		for _, tok := range []string{alice, bob} {
			for _, u := range []string{"alice", "bob"} {
				if st, body := call(t, "GET", n.URL()+"/v1/users/"+u, tok, nil); st != 200 {
					t.Fatalf("profile of %s: %d %s", u, st, body)
				}
			}
		}
	}
	st, body = call(t, "GET", a.URL()+"/v1/inbox", alice, nil)
	var aliceInbox wire.InboxResponse
	if st != 200 || json.Unmarshal(body, &aliceInbox) != nil || len(aliceInbox.Conversations) != 2 || aliceInbox.Stale {
		t.Fatalf("alice's inbox: %d %s", st, body)
	}
	before := map[string]int{}
	for n, l := range logs {
		before[n] = len(l.String())
	}

	proxy.Stop()
	// Past the token cache's TTL: every answer from here comes while the
	// tokens could not have been read from the store.
	time.Sleep(tokenTTL + 200*time.Millisecond)
	sendFailed := false
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		for _, n := range []*node.Node{a, bn} {
			for _, tok := range []string{alice, bob} {
				st, body := call(t, "GET", n.URL()+"/v1/users/alice", tok, nil)
				if st != 200 {
					t.Fatalf("profile read during the outage: %d %s", st, body)
				}
				var p wire.Profile
				if err := json.Unmarshal(body, &p); err != nil || p.UserID != "alice" {
					t.Fatalf("profile %s: %v", body, err)
				}
			}
		}
		if !typing() {
			t.Fatal("alice's typing did not reach bob's socket on the other node during the outage")
		}
		st, body := call(t, "POST", a.URL()+"/v1/conversations/"+conv+"/messages", alice, wire.SendRequest{MessageID: "during", Content: "during"})
		if code := errorCode(body); st != http.StatusServiceUnavailable || (code != wire.CodeUnavailable && code != wire.CodeMaybeStored) {
			t.Fatalf("send during the outage: %d %s, want 503 unavailable or maybe_stored", st, body)
		}
		sendFailed = true
		// Alice's inbox is her copy, from either node: what she was last
		// given, marked stale.
		for _, n := range []*node.Node{a, bn} {
			st, body = call(t, "GET", n.URL()+"/v1/inbox", alice, nil)
			var in wire.InboxResponse
			if st != 200 || json.Unmarshal(body, &in) != nil || !in.Stale {
				t.Fatalf("alice's inbox during the outage: %d %s, want 200 stale", st, body)
			}
			in.Stale = false
			want := wire.InboxResponse{Conversations: slices.Clone(aliceInbox.Conversations)}
			for i := range want.Conversations {
				if want.Conversations[i].LastMessageBody == long {
					want.Conversations[i].LastMessageBody = strings.Repeat("é", 128)
				}
			}
			if !reflect.DeepEqual(in, want) {
				t.Fatalf("alice's inbox during the outage:\n%+v\nwant what she was given before it, its long preview cut:\n%+v", in, want)
			}
		}
	}
	if !sendFailed {
		t.Fatal("no send tried during the outage")
	}
	// Bob's copy lists the direct conversation, not the group he was removed
	// from after his copy was saved.
	st, body = call(t, "GET", bn.URL()+"/v1/inbox", bob, nil)
	var bobInbox wire.InboxResponse
	if st != 200 || json.Unmarshal(body, &bobInbox) != nil || !bobInbox.Stale ||
		len(bobInbox.Conversations) != 1 || bobInbox.Conversations[0].ConversationID != conv {
		t.Fatalf("bob's inbox during the outage: %d %s, want 200 stale with %s alone", st, body, conv)
	}
	outageReads(t, a.URL(), map[string]string{"alice": alice, "bob": bob, "carol": carol}, conv, group.ConversationID)
	// The sync a connected client asks for is answered as failed, never as
	// complete: an error with the hint, then synced with more.
	sf, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeSync, ID: "sync-during", Cursors: []wire.Cursor{{ConversationID: conv}}})
	if err := ws.Write(ctx, websocket.MessageText, sf); err != nil {
		t.Fatal(err)
	}
	var syncErr *wire.Error
	for synced := false; !synced; {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("bob's socket closed")
			}
			switch {
			case f.ID != "sync-during":
			case f.Type == wire.TypeError:
				syncErr = f.Error
			case f.Type == wire.TypeSynced:
				if !f.More || syncErr == nil || syncErr.Code != wire.CodeUnavailable {
					t.Errorf("sync during the outage: error %+v, then synced more=%v; want unavailable, then more", syncErr, f.More)
				}
				synced = true
			default:
				t.Errorf("sync during the outage answered %+v", f)
			}
		case <-ctx.Done():
			t.Fatal("no answer to the sync during the outage")
		}
	}
	// Past the member cache's TTL (5 s): a group's members come from a
	// node's cache, as it was when the node last read them and heard no
	// change since. Alice's presence in the group answers on node-a; bob's,
	// on node-b, whose list had him before the revocation dropped it, not.
	time.Sleep(time.Until(membersCached.Add(5*time.Second + 200*time.Millisecond)))
	var pr wire.PresenceResponse
	if st, body := groupPresence(a, alice); st != 200 || json.Unmarshal(body, &pr) != nil ||
		len(pr.Members) != 1 || pr.Members[0].UserID != "carol" {
		t.Errorf("alice's group presence during the outage: %d %s, want carol's", st, body)
	}
	if st, body := groupPresence(bn, bob); st != http.StatusServiceUnavailable || errorCode(body) != wire.CodeUnavailable {
		t.Errorf("removed bob's group presence on node-b during the outage: %d %s, want 503 unavailable", st, body)
	}

	proxy.Start()
	var sent wire.SendResponse
	testenv.WaitFor(t, 30*time.Second, func() bool {
		st, body := call(t, "POST", a.URL()+"/v1/conversations/"+conv+"/messages", alice, wire.SendRequest{MessageID: "during", Content: "during"})
		if st/100 != 2 {
			return false
		}
		return json.Unmarshal(body, &sent) == nil
	})
	got := false
	for !got {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("bob's socket closed")
			}
			got = f.Type == wire.TypeMessage && f.Message != nil && f.Message.MessageID == "during"
		case <-ctx.Done():
			t.Fatal("the message sent after the outage did not reach bob's socket")
		}
	}
	// Node-b's circuit may still be open a moment after node-a's closed
	// (its own calls failed during the outage, bob's inbox among them).
	var h wire.HistoryResponse
	testenv.WaitFor(t, 30*time.Second, func() bool {
		st, body = call(t, "GET", bn.URL()+"/v1/conversations/"+conv+"/messages?limit=50", bob, nil)
		return st == 200 && json.Unmarshal(body, &h) == nil
	})
	var ids []string
	for _, m := range h.Messages {
		ids = append(ids, m.MessageID)
	}
	if strings.Join(ids, ",") != "during,before" {
		t.Errorf("history after the outage, newest first: %v, want [during before]", ids)
	}

	// The INFO line comes with the first call that succeeds: node-b's may
	// come later than node-a's (its keeper or sweep), so wait for it.
	for n, l := range logs {
		testenv.WaitFor(t, 30*time.Second, func() bool { return strings.Contains(l.String()[before[n]:], "dynamodb answers again") })
	}
	for n, l := range logs {
		out := l.String()[before[n]:]
		var warns, infos int
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.Contains(line, "level=WARN") && strings.Contains(line, "dynamodb is failing"):
				warns++
			case strings.Contains(line, "level=INFO") && strings.Contains(line, "dynamodb answers again"):
				infos++
			case strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR"):
				t.Errorf("%s logged during the outage: %s", n, line)
			}
		}
		if warns != 1 || infos != 1 {
			t.Errorf("%s logged %d WARN and %d INFO lines about DynamoDB, want 1 and 1:\n%s", n, warns, infos, out)
		}
	}
}

// outageReads tries, during the outage, every read a connected client and
// the CLI make, and checks each answers as docs/reliability.md's table says:
// 200 from a cache, or 503 unavailable (the store is its only source), and
// never another user's data.
func outageReads(t *testing.T, base string, tokens map[string]string, direct, group string) {
	t.Helper()
	reads := []struct {
		user, path string
		want       int
	}{
		{"alice", "/v1/me", 200},
		{"alice", "/v1/users/bob", 200},
		{"carol", "/v1/inbox", 503}, // no copy of hers, and no one else's
		{"alice", "/v1/conversations/" + direct + "/messages?limit=50", 503},
		{"alice", "/v1/conversations/" + direct, 503},
		{"alice", "/v1/conversations/" + direct + "/status", 503},
		// A direct conversation's members are in its id; presence is Redis.
		{"alice", "/v1/conversations/" + direct + "/presence", 200},
		{"alice", "/v1/conversations/" + group + "/mentions", 503},
		{"alice", "/v1/mentions", 503},
		{"alice", "/v1/channels", 503},
		{"alice", "/v1/media/usage", 503},
	}
	for _, r := range reads {
		st, body := call(t, "GET", base+r.path, tokens[r.user], nil)
		if st != r.want || st == 503 && errorCode(body) != wire.CodeUnavailable {
			t.Errorf("%s GET %s during the outage: %d %s, want %d", r.user, r.path, st, body, r.want)
		}
	}
}
