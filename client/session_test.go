package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

var bg = context.Background()

func hostport(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestSessionDeliversAndMovesBoundaries(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	bob := startDevice(t, bobAPI, srv.URL, "bob")
	alice.waitFor("alice connected", func() bool { return alice.sess.State().Status == client.Connected })
	bob.waitFor("bob connected", func() bool { return bob.sess.State().Status == client.Connected })
	conv := direct(t, aliceAPI, "bob")

	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	resp, err := alice.sess.Send(ctx, conv, "hello bob")
	if err != nil {
		t.Fatal(err)
	}
	if resp.SeqNo < 1 || resp.ConversationID != conv {
		t.Fatalf("sent %+v", resp)
	}
	seq := resp.SeqNo
	// Alice's cache holds her message; her outbox is empty.
	if ms := alice.cached(conv); len(ms) != 1 || ms[0].Content != "hello bob" || ms[0].SenderID != "alice" {
		t.Fatalf("alice's cache %+v", ms)
	}
	if st := alice.sess.State(); st.Unsent != 0 {
		t.Fatalf("unsent %d after sent", st.Unsent)
	}

	// Bob's device stores it and says so (MessageEvent), then acks: alice's
	// cached boundary for bob moves to delivered.
	bob.waitFor("bob's message event", func() bool { return len(bob.messageEvents()) == 1 })
	if m := bob.messageEvents()[0]; m.Content != "hello bob" || m.SeqNo != seq {
		t.Fatalf("bob got %+v", m)
	}
	alice.waitFor("bob delivered in alice's cache", func() bool {
		d, _, err := alice.store.PeerBoundaries(bg, conv)
		return err == nil && d == seq
	})
	if _, r, _ := alice.store.PeerBoundaries(bg, conv); r != 0 {
		t.Fatalf("read boundary %d before bob read", r)
	}
	if e, _ := bob.store.InboxEntry(bg, conv); e.Unread != 1 {
		t.Fatalf("bob's unread %d, want 1", e.Unread)
	}

	// Bob reads: his unread drops at once; alice's cache sees the read.
	if err := bob.sess.MarkRead(ctx, conv, seq); err != nil {
		t.Fatal(err)
	}
	if e, _ := bob.store.InboxEntry(bg, conv); e.Unread != 0 {
		t.Fatalf("bob's unread %d after read", e.Unread)
	}
	alice.waitFor("bob read in alice's cache", func() bool {
		_, r, err := alice.store.PeerBoundaries(bg, conv)
		return err == nil && r == seq
	})
}

// Messages typed while offline go out once on reconnect, in order, and a
// message the server stored without our hearing back is not stored twice.
func TestSessionOfflineThenReconnectDeliversOnce(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	alice := newDevice(t, aliceAPI, px.URL(), "alice")

	// The server already has "zero" (an earlier send whose answer was lost),
	// and it is still in alice's outbox under the same message_id.
	if _, err := alice.store.Enqueue(bg, conv, "id-zero", "zero"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: "id-zero", Content: "zero"}); err != nil {
		t.Fatal(err)
	}

	px.set(false)
	alice.run()
	alice.waitFor("reconnecting", func() bool { return alice.sess.State().Status == client.Reconnecting })
	for i, text := range []string{"one", "two", "three"} {
		m, err := alice.sess.Enqueue(bg, conv, text)
		if err != nil {
			t.Fatal(err)
		}
		if m.SeqNo != 0 || m.MessageID == "" {
			t.Fatalf("pending message %d: %+v", i, m)
		}
	}
	if st := alice.sess.State(); st.Unsent != 4 || !strings.Contains(st.String(), "4 unsent") {
		t.Fatalf("offline state %+v %q", st, st.String())
	}

	px.set(true)
	alice.waitFor("outbox drained", func() bool { return alice.sess.State().Unsent == 0 })

	hist, err := aliceAPI.History(bg, conv, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(hist.Messages) - 1; i >= 0; i-- {
		got = append(got, hist.Messages[i].Content)
	}
	if strings.Join(got, ",") != "zero,one,two,three" {
		t.Fatalf("server history %v, want each message once, in typing order", got)
	}
	ms := alice.cached(conv)
	if len(ms) != 4 {
		t.Fatalf("alice's cache has %d messages, want 4: %+v", len(ms), ms)
	}
	out, _ := alice.store.Outbox(bg, "")
	if len(out) != 0 {
		t.Fatalf("outbox %+v", out)
	}
}

// A server restart kills every connection mid-stream; the sessions resume and
// every message arrives exactly once, in order.
func TestSessionSurvivesServerRestart(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	bob := startDevice(t, bobAPI, srv.URL, "bob")
	alice.waitFor("alice connected", func() bool { return alice.sess.State().Status == client.Connected })

	const n = 60
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		for i := 1; i <= n; i++ {
			// Enqueue without waiting, so messages are in flight when the
			// connection dies; every 10th waits, to spread them over the restarts.
			if i%10 == 0 {
				if _, err := alice.sess.Send(ctx, conv, fmt.Sprintf("m%02d", i)); err != nil {
					errc <- err
					return
				}
				continue
			}
			if _, err := alice.sess.Enqueue(ctx, conv, fmt.Sprintf("m%02d", i)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	time.Sleep(20 * time.Millisecond)
	srv.Restart(t)
	time.Sleep(50 * time.Millisecond)
	srv.Restart(t)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	alice.waitFor("alice's outbox drained", func() bool { return alice.sess.State().Unsent == 0 })
	bob.waitFor("bob has every message", func() bool { return len(bob.cached(conv)) >= n })

	hist, err := bobAPI.History(bg, conv, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Messages) != n {
		t.Fatalf("server has %d messages, want %d", len(hist.Messages), n)
	}
	check := func(who string, ms []wire.Message) {
		t.Helper()
		if len(ms) != n {
			t.Fatalf("%s has %d messages, want %d", who, len(ms), n)
		}
		for i, m := range ms {
			want := hist.Messages[n-1-i] // the server pages newest first
			if m.SeqNo != want.SeqNo || m.MessageID != want.MessageID || m.Content != fmt.Sprintf("m%02d", i+1) {
				t.Fatalf("%s: message %d is seq %d %q; the server has seq %d %q, typed m%02d (lost, duplicated or reordered)",
					who, i, m.SeqNo, m.Content, want.SeqNo, want.Content, i+1)
			}
		}
	}
	check("bob's cache", bob.cached(conv))
	check("alice's cache", alice.cached(conv))
	last := hist.Messages[0].SeqNo
	// No number skipped: a hole would hold bob's acks below it for HoleWait.
	if last != n {
		var seqs []int64
		for _, m := range hist.Messages {
			seqs = append(seqs, m.SeqNo)
		}
		t.Fatalf("server's seq_nos, newest first: %v; want 1 to %d, no hole", seqs, n)
	}
	// Each new message was announced to bob once.
	seen := map[int64]int{}
	for _, m := range bob.messageEvents() {
		seen[m.SeqNo]++
	}
	for seq, k := range seen {
		if k != 1 {
			t.Fatalf("bob was told of seq %d %d times", seq, k)
		}
	}
	// Bob's acks reach the server after the restarts: alice sees all delivered.
	alice.waitFor("all delivered", func() bool {
		d, _, _ := alice.store.PeerBoundaries(bg, conv)
		return d == last
	})
}

// A message frame lost on the way (the connection stays up) is noticed when the
// next message lands beyond the cursor, and fetched by a sync of that
// conversation, without a reconnect.
func TestSessionRecoversALostFrame(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	bob := startDevice(t, bobAPI, px.URL(), "bob")
	send := func(id string) wire.SendResponse {
		t.Helper()
		r, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	send("m1")
	bob.waitFor("m1", func() bool { return len(bob.cached(conv)) == 1 })

	var dropped atomic.Int32
	px.setDrop(func(payload []byte) bool {
		return bytes.Contains(payload, []byte(`"message_id":"lost"`)) && dropped.CompareAndSwap(0, 1)
	})
	send("lost")
	last := send("m3")
	// Events follow the store's commit: wait for both.
	bob.waitFor("the lost message", func() bool { return len(bob.cached(conv)) == 3 && len(bob.messageEvents()) >= 3 })
	if dropped.Load() != 1 {
		t.Fatal("the proxy dropped nothing: the test did not test anything")
	}
	if c, _, _ := bob.store.Cursor(bg, conv); c != last.SeqNo {
		t.Fatalf("cursor %d, want %d", c, last.SeqNo)
	}
	for _, st := range bob.states() {
		if st == client.Reconnecting {
			t.Fatal("recovered by reconnecting, not by a sync on the live connection")
		}
	}
	seen := map[string]int{}
	for _, m := range bob.messageEvents() {
		seen[m.MessageID]++
	}
	if seen["m1"] != 1 || seen["lost"] != 1 || seen["m3"] != 1 {
		t.Fatalf("message events %v, want each once", seen)
	}
	// The acks caught up too: the server counts all three as delivered.
	bob.waitFor("delivered on the server", func() bool {
		m, ok := serverMember(aliceAPI, conv, "bob")
		return ok && m.LastDeliveredSeq == last.SeqNo
	})
}

// A connection that goes silent (no close, no error: a dead network path) is
// given up after missed pings, and the session reconnects.
func TestSessionDetectsDeadConnection(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	bob := startDevice(t, bobAPI, px.URL(), "bob", func(c *client.SessionConfig) { c.PingInterval = 100 * time.Millisecond })
	bob.waitFor("connected", func() bool { return bob.sess.State().Status == client.Connected })
	px.freeze(true)
	if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: "while-dead", Content: "hello?"}); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("the dead connection noticed", func() bool { return bob.sess.State().Status == client.Reconnecting })
	px.freeze(false)
	bob.waitFor("the message after reconnecting", func() bool { return len(bob.cached(conv)) == 1 })
}

// A device that was offline catches up by sync, from its cursors.
func TestSessionSyncsMissedMessages(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	// bob's first device receives and acks 1..3 (pending is then empty).
	bob1 := startDevice(t, bobAPI, srv.URL, "bob")
	for i := 1; i <= 3; i++ {
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: fmt.Sprintf("a%d", i), Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	bob1.waitFor("bob1 has 3", func() bool { return len(bob1.cached(conv)) == 3 })
	// bob's second device saw message 1 once, then was away while 2..5 came.
	bob2 := newDevice(t, bobAPI, srv.URL, "bob")
	all3, err := bobAPI.History(bg, conv, 0, 3)
	if err != nil || len(all3.Messages) != 3 {
		t.Fatalf("history: %+v %v", all3, err)
	}
	if _, err := bob2.store.PutMessages(bg, all3.Messages[2]); err != nil { // the oldest
		t.Fatal(err)
	}
	for i := 4; i <= 5; i++ {
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: fmt.Sprintf("a%d", i), Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	bob1.waitFor("bob1 has 5", func() bool { return len(bob1.cached(conv)) == 5 })
	bob2.run()
	bob2.waitFor("bob2 synced 2..5", func() bool { return len(bob2.cached(conv)) == 5 })
	if c, _, _ := bob2.store.Cursor(bg, conv); c != bob1.cached(conv)[4].SeqNo {
		t.Fatalf("bob2's cursor %d, want the newest seq_no", c)
	}
}

// A sync the server could not serve (its store down) is answered with a
// retryable error and "synced" with more set; the device asks again after the
// hint on the same connection, and gets what it lacks, without a reconnect and
// without a later message to show it a gap.
func TestSessionSyncRetriedAfterServerFailure(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	bob1 := startDevice(t, bobAPI, srv.URL, "bob") // acks everything: nothing stays pending
	for i := 1; i <= 4; i++ {
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: fmt.Sprintf("a%d", i), Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	bob1.waitFor("bob1 has 4", func() bool { return len(bob1.cached(conv)) == 4 })
	px := newProxy(t, hostport(t, srv.URL))
	bob2 := newDevice(t, bobAPI, px.URL(), "bob")
	first, err := bobAPI.History(bg, conv, 2, 1)
	if err != nil || len(first.Messages) != 1 {
		t.Fatalf("history: %+v %v", first, err)
	}
	if _, err := bob2.store.PutMessages(bg, first.Messages[0]); err != nil { // bob2 saw message 1 only
		t.Fatal(err)
	}

	// The proxy answers bob2's first sync as a server whose store is down would.
	var failed atomic.Bool
	px.setRewrite(func(frame []byte) [][]byte {
		if failed.Load() {
			return [][]byte{frame}
		}
		f, err := wire.DecodeFrame(frame)
		if err != nil {
			return [][]byte{frame}
		}
		switch {
		case f.Type == wire.TypeMessage:
			return nil // the store could not be read
		case f.Type == wire.TypeSynced:
			failed.Store(true)
			e := wire.Errorf(wire.CodeUnavailable, "store unavailable")
			e.RetryAfterMs = 200
			errFrame, _ := wire.EncodeFrame(wire.ErrorFrame(f.ID, e))
			synced, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeSynced, ID: f.ID, More: true})
			return [][]byte{errFrame, synced}
		}
		return [][]byte{frame}
	})
	bob2.run()
	bob2.waitFor("bob2 has 1..4", func() bool { return len(bob2.cached(conv)) == 4 })
	if !failed.Load() {
		t.Fatal("the proxy failed no sync: the test did not test anything")
	}
	for _, st := range bob2.states() {
		if st == client.Reconnecting {
			t.Fatal("recovered by reconnecting, not by asking again on the live connection")
		}
	}
	if c, _, _ := bob2.store.Cursor(bg, conv); c != bob1.cached(conv)[3].SeqNo {
		t.Fatalf("bob2's cursor %d, want the newest seq_no", c)
	}
}

// A gap that a complete sync does not fill may be a write still in flight,
// not a number no message took: the device does not pass it at once (which
// would ack past it, and the server would stop keeping it pending) but asks
// again after HoleWait, and gets the message that was stored meanwhile.
func TestSessionHoleNotPassedAtOnce(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	// Until the proxy has passed bob's first "synced" after m2, m1 does not
	// reach him: its live copy is lost and the sync answers as if it were not
	// stored yet.
	var m2Seen, hidden atomic.Bool
	px.setRewrite(func(frame []byte) [][]byte {
		f, err := wire.DecodeFrame(frame)
		if err != nil || hidden.Load() {
			return [][]byte{frame}
		}
		switch {
		case f.Type == wire.TypeMessage && f.Message.MessageID == "m1":
			return nil
		case f.Type == wire.TypeMessage && f.Message.MessageID == "m2":
			m2Seen.Store(true)
		case f.Type == wire.TypeSynced && m2Seen.Load():
			hidden.Store(true)
		}
		return [][]byte{frame}
	})
	bob := startDevice(t, bobAPI, px.URL(), "bob", func(c *client.SessionConfig) { c.HoleWait = 300 * time.Millisecond })
	send := func(id string) {
		t.Helper()
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id}); err != nil {
			t.Fatal(err)
		}
	}
	send("m0") // seq 1: bob knows the conversation from here
	bob.waitFor("m0", func() bool { return len(bob.cached(conv)) == 1 })
	send("m1")
	send("m2")
	bob.waitFor("m1 after all", func() bool { return len(bob.cached(conv)) == 3 })
	if !hidden.Load() {
		t.Fatal("the proxy hid nothing: the test did not test anything")
	}
	if c, _, _ := bob.store.Cursor(bg, conv); c != 3 {
		t.Fatalf("bob's cursor %d, want 3", c)
	}
}

func TestSessionHistory(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	for i := 1; i <= 30; i++ {
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: fmt.Sprintf("m%d", i), Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	bob := newDevice(t, bobAPI, srv.URL, "bob") // not running: history is HTTP and cache

	full, err := bobAPI.History(bg, conv, 0, 100)
	if err != nil || len(full.Messages) != 30 {
		t.Fatalf("server history: %d, %v", len(full.Messages), err)
	}
	seqOf := func(i int) int64 { return full.Messages[30-i].SeqNo } // seq_no of the i-th message, from 1
	t.Run("OK", func(t *testing.T) {
		p, err := bob.sess.History(bg, conv, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) != 10 || p.Messages[0].SeqNo != seqOf(21) || p.Messages[9].SeqNo != seqOf(30) || !p.More || p.Stale {
			t.Fatalf("newest page: %d messages, %+v", len(p.Messages), p)
		}
		p, err = bob.sess.History(bg, conv, seqOf(21), 10)
		if err != nil || len(p.Messages) != 10 || p.Messages[0].SeqNo != seqOf(11) {
			t.Fatalf("older page: %+v %v", p, err)
		}
		// Both pages are now cached: with the server gone they still come whole.
		srv.Close()
		p, err = bob.sess.History(bg, conv, 0, 10)
		if err != nil || p.Stale || len(p.Messages) != 10 || p.Messages[9].SeqNo != seqOf(30) {
			t.Fatalf("cached newest page: %+v %v", p, err)
		}
		p, err = bob.sess.History(bg, conv, seqOf(21), 10)
		if err != nil || p.Stale || len(p.Messages) != 10 {
			t.Fatalf("cached older page: %+v %v", p, err)
		}
	})
	t.Run("OKStaleWhenOffline", func(t *testing.T) {
		p, err := bob.sess.History(bg, conv, seqOf(11), 10) // not cached, server down
		if err != nil || !p.Stale || len(p.Messages) != 0 {
			t.Fatalf("offline uncached page: %+v %v", p, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		if _, err := bob.sess.History(bg, "nope", 0, 10); wire.ErrorCode(err) != wire.CodeInvalid {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSessionRefusedMessageFails(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.MaxMessageBytes = 10 }))
	aliceAPI, _ := register(t, srv, "alice"), register(t, srv, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	conv := direct(t, aliceAPI, "bob")
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	_, err := alice.sess.Send(ctx, conv, "this message is far too long")
	if wire.ErrorCode(err) != wire.CodeTooLarge {
		t.Fatalf("err = %v, want too_large", err)
	}
	out, _ := alice.store.Outbox(bg, conv)
	if len(out) != 1 || out[0].Err == nil || alice.sess.State().Unsent != 0 {
		t.Fatalf("outbox %+v, state %+v", out, alice.sess.State())
	}
}

func TestSessionTokenRefused(t *testing.T) {
	srv := servertest.Start(t)
	api := register(t, srv, "alice")
	if err := api.Logout(bg); err != nil {
		t.Fatal(err)
	}
	store := localstore.MustOpen(t, localstore.Options{UserID: "alice"})
	sess := client.NewSession(client.SessionConfig{API: api, Store: store, Backoff: fastBackoff})
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	err := sess.Run(ctx)
	if !errors.Is(err, client.ErrNotLoggedIn) {
		t.Fatalf("Run = %v, want ErrNotLoggedIn", err)
	}
	if st := sess.State(); st.Status != client.Offline || !st.LoggedOut {
		t.Fatalf("state %+v", st)
	}
}

// In a group, a message is read when every other member has read it.
func TestWaitPassedGroup(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI, carolAPI := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	g, err := aliceAPI.CreateConversation(bg, wire.CreateConversationRequest{Type: wire.Group, Name: "team", Members: []string{"bob", "carol"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := aliceAPI.SendMessage(bg, g.ConversationID, wire.SendRequest{MessageID: "g1", Content: "hi team"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		done <- client.WaitPassed(ctx, aliceAPI, g.ConversationID, resp.SeqNo, true)
	}()
	if _, err := bobAPI.MarkRead(bg, g.ConversationID, resp.SeqNo); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("returned with carol unread: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := carolAPI.MarkRead(bg, g.ConversationID, resp.SeqNo); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Being added to a group shows up at once: a ConversationEvent, and the
// group with its name in the cached inbox.
func TestSessionConversationEvent(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	bob := startDevice(t, bobAPI, srv.URL, "bob")
	bob.waitFor("connected", func() bool { return bob.sess.State().Status == client.Connected })
	g, err := aliceAPI.CreateConversation(bg, wire.CreateConversationRequest{Type: wire.Group, Name: "ops", Members: []string{"bob"}})
	if err != nil {
		t.Fatal(err)
	}
	bob.waitFor("conversation event", func() bool {
		bob.mu.Lock()
		defer bob.mu.Unlock()
		for _, ev := range bob.events {
			if c, ok := ev.(client.ConversationEvent); ok && c.Conversation.ConversationID == g.ConversationID {
				return true
			}
		}
		return false
	})
	e, err := bob.store.InboxEntry(bg, g.ConversationID)
	if err != nil || e.Name != "ops" || e.Type != wire.Group {
		t.Fatalf("cached inbox entry %+v %v", e, err)
	}
}

func TestWaitPassed(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	resp, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: "w1", Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ErrTimeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
		defer cancel()
		if err := client.WaitPassed(ctx, aliceAPI, conv, resp.SeqNo, true); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want deadline", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			defer cancel()
			done <- client.WaitPassed(ctx, aliceAPI, conv, resp.SeqNo, true)
		}()
		time.Sleep(100 * time.Millisecond)
		if _, err := bobAPI.MarkRead(bg, conv, resp.SeqNo); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Already read: returns at once.
		ctx, cancel := context.WithTimeout(bg, 2*time.Second)
		defer cancel()
		if err := client.WaitPassed(ctx, aliceAPI, conv, resp.SeqNo, true); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSendNow(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	api := client.NewAPI(px.URL(), aliceAPI.Token(), httpClient(t))
	t.Run("OKRetriedOverAnOutage", func(t *testing.T) {
		px.set(false)
		time.AfterFunc(150*time.Millisecond, func() { px.set(true) })
		resp, err := api.SendNow(bg, conv, wire.SendRequest{MessageID: "now-1", Content: "through the outage"})
		if err != nil {
			t.Fatal(err)
		}
		again, err := api.SendNow(bg, conv, wire.SendRequest{MessageID: "now-1", Content: "through the outage"})
		if err != nil || !reflect.DeepEqual(again, resp) {
			t.Fatalf("repeat: %+v %v, first %+v", again, err, resp)
		}
		h, err := bobAPI.History(bg, conv, 0, 10)
		if err != nil || len(h.Messages) != 1 {
			t.Fatalf("bob's history: %+v %v", h, err)
		}
	})
	t.Run("ErrDown", func(t *testing.T) {
		px.set(false)
		defer px.set(true)
		// Retried until the context ends, then the last failure is said: the
		// network's, or the deadline's when it ends an attempt (on a loaded
		// machine the last attempt may be under way then).
		ctx, cancel := context.WithTimeout(bg, time.Second)
		defer cancel()
		_, err := api.SendNow(ctx, conv, wire.SendRequest{MessageID: "now-2", Content: "x"})
		if !client.IsNetError(err) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	})
}

// A conversation read while offline counts as unread nowhere once back: the
// cache drops the count at once, and the server hears of it on reconnect.
func TestSessionOfflineReadReportedOnReconnect(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	resp, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: "r1", Content: "read me"})
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, hostport(t, srv.URL))
	bob := startDevice(t, bobAPI, px.URL(), "bob")
	bob.waitFor("the message", func() bool { return len(bob.cached(conv)) == 1 })
	px.set(false)
	bob.waitFor("offline", func() bool { return bob.sess.State().Status == client.Reconnecting })
	if err := bob.sess.MarkRead(bg, conv, resp.SeqNo); err != nil {
		t.Fatal(err)
	}
	if e, _ := bob.store.InboxEntry(bg, conv); e.Unread != 0 {
		t.Fatalf("unread %d after reading offline", e.Unread)
	}
	px.set(true)
	bob.waitFor("the read on the server", func() bool {
		m, ok := serverMember(aliceAPI, conv, "bob")
		return ok && m.LastReadSeq == resp.SeqNo
	})
}

// A file goes up by presigned URL, its media_id travels as the attachment of a
// message, and the other side fetches it back.
func TestSessionAttachment(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	bob := startDevice(t, bobAPI, srv.URL, "bob")
	body := []byte("\x89PNG not really a picture")
	id, err := aliceAPI.UploadMedia(bg, "image/png", bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	// Sent over HTTP, received over bob's socket into his cache.
	if _, err := aliceAPI.SendNow(bg, conv, wire.SendRequest{MessageID: "pic-1", Attachment: id}); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("the attachment", func() bool { return len(bob.messageEvents()) == 1 })
	m := bob.messageEvents()[0]
	if m.Attachment != id || m.Content != "" {
		t.Fatalf("bob got %+v", m)
	}
	if e, _ := bob.store.InboxEntry(bg, conv); e.LastMessageBody == "" {
		t.Fatalf("empty preview for an attachment: %+v", e)
	}
	url, err := bobAPI.MediaURL(bg, m.Attachment)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("download: %s %q", resp.Status, got)
	}
}

// An attachment sent from the session's outbox, over the socket.
func TestSessionSendsAttachment(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	id, err := aliceAPI.UploadMedia(bg, "text/plain", strings.NewReader("notes"), 5)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	resp, err := alice.sess.SendMessage(ctx, wire.Message{ConversationID: conv, Content: "see notes", Attachment: id})
	if err != nil {
		t.Fatal(err)
	}
	m, err := alice.store.Message(bg, conv, resp.SeqNo)
	if err != nil || m.Attachment != id || m.Content != "see notes" {
		t.Fatalf("alice's cache: %+v %v", m, err)
	}
	h, err := aliceAPI.History(bg, conv, 0, 1)
	if err != nil || len(h.Messages) != 1 {
		t.Fatalf("history: %+v %v", h, err)
	}
	if h.Messages[0].Attachment != id {
		t.Fatalf("the server stored %+v", h.Messages[0])
	}
}

// A reply means its sender read everything before it: the ticks of
// our earlier messages turn read with no status frame from the server.
func TestSessionReplyImpliesRead(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	alice := startDevice(t, aliceAPI, srv.URL, "alice")
	alice.waitFor("connected", func() bool { return alice.sess.State().Status == client.Connected })
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	mine, err := alice.sess.Send(ctx, conv, "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	reply, _, err := bobAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: "yes", Content: "yes"})
	if err != nil {
		t.Fatal(err)
	}
	alice.waitFor("bob's implicit read", func() bool {
		alice.mu.Lock()
		defer alice.mu.Unlock()
		for _, ev := range alice.events {
			if s, ok := ev.(client.StatusEvent); ok && s.Status.UserID == "bob" && s.Status.LastReadSeq >= mine.SeqNo {
				return true
			}
		}
		return false
	})
	if _, r, _ := alice.store.PeerBoundaries(bg, conv); r != reply.SeqNo {
		t.Fatalf("bob's read boundary %d in alice's cache, want %d", r, reply.SeqNo)
	}
}

// Sending while the session waits out a long backoff retries at once: the
// user is waiting on that message.
func TestSessionSendCutsBackoffShort(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, _ := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	alice := startDevice(t, aliceAPI, px.URL(), "alice", func(c *client.SessionConfig) {
		c.Backoff = client.Backoff{Base: time.Hour, Cap: time.Hour}
		c.Rand = func() float64 { return 0.5 } // every wait is half an hour
	})
	alice.waitFor("connected", func() bool { return alice.sess.State().Status == client.Connected })
	px.set(false)
	alice.waitFor("a long wait", func() bool {
		st := alice.sess.State()
		return st.Status == client.Reconnecting && time.Until(st.RetryAt) > 10*time.Minute
	})
	px.set(true)
	if _, err := alice.sess.Enqueue(bg, conv, "now please"); err != nil {
		t.Fatal(err)
	}
	alice.waitFor("sent without waiting half an hour", func() bool { return alice.sess.State().Unsent == 0 })
}

// Many messages pending while offline reach the device in WebSocket messages of
// several frames each (the server batches what it has queued); the session
// takes every one, once and in order.
func TestSessionReadsBatchedMessages(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	const n = 150
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("m%03d", i)
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id}); err != nil {
			t.Fatal(err)
		}
	}
	px := newProxy(t, hostport(t, srv.URL))
	var most atomic.Int32
	px.setWatch(func(payload []byte) {
		k := int32(0)
		for range wire.Frames(payload) {
			k++
		}
		for m := most.Load(); k > m && !most.CompareAndSwap(m, k); m = most.Load() {
		}
	})
	bob := startDevice(t, bobAPI, px.URL(), "bob")
	bob.waitFor("every message", func() bool { return len(bob.cached(conv)) == n && len(bob.messageEvents()) >= n })
	events := bob.messageEvents()
	if len(events) != n {
		t.Fatalf("%d message events, want %d", len(events), n)
	}
	for i, m := range events {
		if want := fmt.Sprintf("m%03d", i+1); m.MessageID != want || m.SeqNo != int64(i+1) {
			t.Fatalf("event %d is %s at seq %d, want %s at seq %d", i, m.MessageID, m.SeqNo, want, i+1)
		}
	}
	if most.Load() < 2 {
		t.Fatal("every WebSocket message carried one frame: the test tested nothing batched")
	}
	t.Logf("the largest message carried %d frames", most.Load())
}

// Run returns only when everything it started has ended — the connection's
// reader and writer, the inbox refresh, the retries of refused sends waiting
// for their hint — so the cache can be closed right after, here during a
// reconnect with refused sends queued, and no code of the session runs on.
func TestRunLeavesNothingBehind(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.SendRate = 1 }))
	aliceAPI := register(t, srv, "alice")
	register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	px := newProxy(t, hostport(t, srv.URL))
	var refused atomic.Int32
	px.setWatch(func(payload []byte) {
		if bytes.Contains(payload, []byte(`"code":"rate_limited"`)) {
			refused.Add(1)
		}
	})
	store, err := localstore.Open(bg, t.TempDir()+"/cache.db", localstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	sess := client.NewSession(client.SessionConfig{API: client.NewAPI(px.URL(), aliceAPI.Token(), httpClient(t)),
		Store: store, Backoff: fastBackoff, PingInterval: time.Second})
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	go func() {
		for {
			select {
			case <-sess.Events():
			case <-ctx.Done():
				return
			}
		}
	}()
	testenv.WaitFor(t, 10*time.Second, func() bool { return sess.State().Status == client.Connected })
	for i := range 5 {
		if _, err := sess.Enqueue(bg, conv, fmt.Sprint("burst ", i)); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 10*time.Second, func() bool { return refused.Load() > 0 }) // retries now wait on their hint
	px.set(false)
	testenv.WaitFor(t, 10*time.Second, func() bool { return sess.State().Status == client.Reconnecting })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	testenv.NoGoroutinesIn(t, 0, "github.com/chatterm/chat/client.")
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
}

// A name from the sender is cleaned before it names a file here, whatever
// the server let through: "invoice\u202efdp.sh" (shown as "invoicehs.pdf")
// is saved as invoicefdp.sh, "../x" stays in the directory, ".bashrc" is
// not hidden.
func TestSaveMediaCleansTheName(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI := register(t, srv, "alice")
	id, err := aliceAPI.UploadMedia(bg, "text/plain", strings.NewReader("notes"), 5)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, want := range map[string]string{"invoice\u202efdp.sh": "invoicefdp.sh", "../../x": "_.._x", ".bashrc": "bashrc", "-rf": "rf"} {
		path, err := aliceAPI.SaveMedia(bg, id, dir, name)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(path) != dir || filepath.Base(path) != want {
			t.Errorf("%q saved as %s, want %s in %s", name, path, want, dir)
		}
	}
}
