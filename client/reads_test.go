package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// A view that marks each message read as it shows it reports to the server
// once per AckDelay, with the newest boundary, not once per message; and a
// report still waiting when the connection drops goes on the next one.
func TestMarkReadWaitsAndSurvivesAReconnect(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	for i := 1; i <= 10; i++ {
		id := fmt.Sprintf("m%d", i)
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id}); err != nil {
			t.Fatal(err)
		}
	}
	px := newProxy(t, hostport(t, srv.URL))
	bob := startDevice(t, bobAPI, px.URL(), "bob", func(c *client.SessionConfig) { c.AckDelay = time.Hour })
	bob.waitFor("alice's messages", func() bool { return len(bob.cached(conv)) == 10 })
	bob.waitFor("connected", func() bool { return bob.sess.State().Status == client.Connected })
	for seq := int64(1); seq <= 10; seq++ {
		if err := bob.sess.MarkRead(bg, conv, seq); err != nil {
			t.Fatal(err)
		}
	}
	e, err := bob.store.InboxEntry(bg, conv)
	if err != nil || e.LastReadSeq != 10 || e.Unread != 0 {
		t.Fatalf("bob's inbox row %+v, %v: want read up to 10 at once, here", e, err)
	}
	time.Sleep(300 * time.Millisecond) // a report sent at once would be in by now
	if n := readBy(t, aliceAPI, conv, "bob"); n != 0 {
		t.Fatalf("the server has bob's read at %d before his AckDelay passed; want the report waiting", n)
	}
	px.set(false)
	bob.waitFor("the connection lost", func() bool { return bob.sess.State().Status != client.Connected })
	px.set(true)
	bob.sess.RetryNow()
	bob.waitFor("bob's read at 10 on the server", func() bool { return readBy(t, aliceAPI, conv, "bob") == 10 })
}

// readBy is the member's read boundary as the server has it.
func readBy(t *testing.T, api *client.API, conv, user string) int64 {
	t.Helper()
	resp, err := api.Status(bg, conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range resp.Members {
		if st.UserID == user {
			return st.LastReadSeq
		}
	}
	return 0
}

// A read report still waiting when the process ends (here its session ends
// before AckDelay) is not lost: the cache has the boundary, and the next
// session tells the server what its inbox does not have yet.
func TestMarkReadSentByTheNextSession(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("m%d", i)
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id}); err != nil {
			t.Fatal(err)
		}
	}
	store := localstore.MustOpen(t, localstore.Options{UserID: "bob"})
	run := func(delay time.Duration, during func(*client.Session)) {
		ctx, cancel := context.WithCancel(bg)
		sess := client.NewSession(client.SessionConfig{API: client.NewAPI(srv.URL, bobAPI.Token(), httpClient(t)), Store: store,
			Backoff: fastBackoff, AckDelay: delay, Logger: testLogger(t, "bob")})
		done := make(chan error, 1)
		go func() { done <- sess.Run(ctx) }()
		go func() {
			for range sess.Events() {
			}
		}()
		during(sess)
		cancel()
		<-done
	}
	run(time.Hour, func(sess *client.Session) {
		testenv.WaitFor(t, 10*time.Second, func() bool {
			n, _ := store.LatestSeq(bg, conv)
			return n == 3 && sess.State().Status == client.Connected
		})
		if err := sess.MarkRead(bg, conv, 3); err != nil {
			t.Fatal(err)
		}
	})
	if n := readBy(t, aliceAPI, conv, "bob"); n != 0 {
		t.Fatalf("the server has bob's read at %d; want it still waiting when his session ended", n)
	}
	run(-1, func(*client.Session) {
		testenv.WaitFor(t, 10*time.Second, func() bool { return readBy(t, aliceAPI, conv, "bob") == 3 })
	})
}
