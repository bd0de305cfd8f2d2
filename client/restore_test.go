package client_test

import (
	"fmt"
	"testing"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// restoredEvents returns the RestoredEvents reported so far.
func (d *device) restoredEvents() []client.RestoredEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []client.RestoredEvent
	for _, ev := range d.events {
		if r, ok := ev.(client.RestoredEvent); ok {
			out = append(out, r)
		}
	}
	return out
}

// rollbackScene: alice sends 1–12 to bob, the server is backed up, alice
// sends X (13) and bob answers "bob-lost" (14), both in bob's cache; then the
// server goes back to the backup (restore) while bob is cut off, and alice
// sends Y, which the server stores as 13 again. Bob is behind a proxy, so the
// test says when he reconnects.
func rollbackScene(t *testing.T, restore func(srv *servertest.Server, backup string, bob *device), sendY bool) (bob *device, conv string, px *proxy) {
	t.Helper()
	srv := servertest.Start(t)
	srv.NeedsEmbedded(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv = direct(t, aliceAPI, "bob")
	px = newProxy(t, hostport(t, srv.URL))
	bob = startDevice(t, bobAPI, px.URL(), "bob")
	send := func(id, text string) wire.SendResponse {
		t.Helper()
		resp, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: text})
		if err != nil {
			t.Fatalf("send %s: %v", id, err)
		}
		return resp
	}
	for i := 1; i <= 12; i++ {
		send(fmt.Sprintf("m%02d", i), fmt.Sprintf("message %d", i))
	}
	bob.waitFor("1–12 cached", func() bool { return len(bob.cached(conv)) == 12 })
	backup := srv.Backup(t)

	if r := send("X", "the lost thirteenth"); r.SeqNo != 13 {
		t.Fatalf("X stored as %d", r.SeqNo)
	}
	if _, err := bob.sess.EnqueueID(bg, conv, "bob-lost", "bob's answer the server loses"); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("13 and 14 cached", func() bool {
		ms := bob.cached(conv)
		return len(ms) == 14 && ms[12].MessageID == "X" && ms[13].MessageID == "bob-lost"
	})
	if err := bob.sess.MarkRead(bg, conv, 14); err != nil {
		t.Fatal(err)
	}

	px.set(false)
	bob.waitFor("bob cut off", func() bool { return bob.sess.State().Status != client.Connected })
	restore(srv, backup, bob)
	if !sendY {
		return bob, conv, px
	}
	if r := send("Y", "the new thirteenth"); r.SeqNo != 13 {
		t.Fatalf("Y stored as %d after the restore, want 13 (the number X had)", r.SeqNo)
	}
	return bob, conv, px
}

// checkReconciled: bob's cache holds the server's 13 (Y), X is gone from it
// and from search, his own lost answer was sent again and is the server's
// 14, nothing is held twice, and he was told once.
func checkReconciled(t *testing.T, bob *device, conv string, storeChanged bool) {
	t.Helper()
	bob.waitFor("Y at 13 and bob's answer sent again", func() bool {
		ms := bob.cached(conv)
		return len(ms) == 14 && ms[12].MessageID == "Y" && ms[13].MessageID == "bob-lost" && bob.sess.State().Unsent == 0
	})
	hist, err := bob.sess.API().History(bg, conv, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Messages) != 14 || hist.Messages[0].MessageID != "bob-lost" || hist.Messages[0].SeqNo != 14 || hist.Messages[1].MessageID != "Y" {
		t.Fatalf("server history after the reconciliation: %+v", hist.Messages[:2])
	}
	seen := map[string]bool{}
	for i, m := range bob.cached(conv) {
		if m.SeqNo != int64(i+1) || seen[m.MessageID] {
			t.Fatalf("bob's cache at %d: %+v (a hole or a message twice)", i, m)
		}
		seen[m.MessageID] = true
	}
	if hits, err := bob.store.Search(bg, "lost thirteenth", "", 10); err != nil || len(hits) != 0 {
		t.Fatalf("search finds the lost message: %+v, %v", hits, err)
	}
	if hits, err := bob.store.Search(bg, "new thirteenth", "", 10); err != nil || len(hits) != 1 || hits[0].Message.SeqNo != 13 {
		t.Fatalf("search for the new 13: %+v, %v", hits, err)
	}
	var shownY bool
	for _, m := range bob.messageEvents() {
		shownY = shownY || m.MessageID == "Y"
	}
	if !shownY {
		t.Fatal("no MessageEvent for Y: the UI never shows it")
	}
	evs := bob.restoredEvents()
	if len(evs) != 1 || evs[0].Lost != 2 || evs[0].Resent != 1 || evs[0].StoreChanged != storeChanged || len(evs[0].Conversations) != 1 {
		t.Fatalf("restored events: %+v", evs)
	}
	t.Logf("notice: %s", evs[0].Notice())
}

// The scene: after chatserver restore the hello's store id is new,
// and bob's session reconciles before it syncs.
func TestSessionReconcilesAfterARestore(t *testing.T) {
	bob, conv, px := rollbackScene(t, func(srv *servertest.Server, backup string, _ *device) { srv.Restore(t, backup) }, true)
	px.set(true)
	checkReconciled(t, bob, conv, true)
	// Reconnecting to the same store changes nothing more.
	px.set(false)
	px.set(true)
	bob.waitFor("reconnected", func() bool { return bob.sess.State().Status == client.Connected })
	if evs := bob.restoredEvents(); len(evs) != 1 {
		t.Fatalf("a reconnect to the same store reconciled again: %+v", evs)
	}
}

// A store put back without a new id (the database file copied back by
// hand): the hello says nothing new, but Y arrives live under a seq_no bob
// holds X under, and that is reconciled the same way.
func TestSessionReconcilesOnASeqNoHeldUnderAnotherMessage(t *testing.T) {
	bob, conv, px := rollbackScene(t, func(srv *servertest.Server, backup string, _ *device) { srv.RollBack(t, backup) }, true)
	px.set(true)
	checkReconciled(t, bob, conv, false)
}

// A cache that recorded no store id (filled by a client older than store
// ids) is compared with the server at its first connect, even when no new
// message would show the difference: bob's lost answer is sent again.
func TestSessionReconcilesACacheWithoutAStoreID(t *testing.T) {
	bob, conv, px := rollbackScene(t, func(srv *servertest.Server, backup string, bob *device) {
		srv.RollBack(t, backup)
		if err := bob.store.SetStoreID(bg, ""); err != nil {
			t.Fatal(err)
		}
	}, false)
	px.set(true)
	bob.waitFor("bob's answer sent again as 13", func() bool {
		ms := bob.cached(conv)
		return len(ms) == 13 && ms[12].MessageID == "bob-lost" && bob.sess.State().Unsent == 0
	})
	if hits, err := bob.store.Search(bg, "lost thirteenth", "", 10); err != nil || len(hits) != 0 {
		t.Fatalf("search finds the lost message: %+v, %v", hits, err)
	}
	if evs := bob.restoredEvents(); len(evs) != 1 || evs[0].StoreChanged || evs[0].Lost != 2 || evs[0].Resent != 1 {
		t.Fatalf("restored events: %+v", evs)
	}
}

// A store put back without a new identity, and nothing new from others: the
// first sign is the answer to bob's own next message, stored under the number
// X had. His message takes its place, and the rest is reconciled: his lost
// answer goes out again after it.
func TestSessionReconcilesOnASentAnswerUnderAHeldSeqNo(t *testing.T) {
	bob, conv, px := rollbackScene(t, func(srv *servertest.Server, backup string, _ *device) { srv.RollBack(t, backup) }, false)
	px.set(true)
	bob.waitFor("reconnected", func() bool { return bob.sess.State().Status == client.Connected })
	if _, err := bob.sess.EnqueueID(bg, conv, "bob-new", "typed after the rollback"); err != nil {
		t.Fatal(err)
	}
	bob.waitFor("the reconciliation", func() bool { return len(bob.restoredEvents()) > 0 })
	bob.waitFor("bob's new message at 13, his lost answer sent again at 14", func() bool {
		ms := bob.cached(conv)
		return len(ms) == 14 && ms[12].MessageID == "bob-new" && ms[13].MessageID == "bob-lost" && bob.sess.State().Unsent == 0
	})
	hist, err := bob.sess.API().History(bg, conv, 0, 3)
	if err != nil || len(hist.Messages) != 3 || hist.Messages[0].MessageID != "bob-lost" || hist.Messages[1].MessageID != "bob-new" {
		t.Fatalf("server history: %+v, %v", hist.Messages, err)
	}
	if hits, err := bob.store.Search(bg, "lost thirteenth", "", 10); err != nil || len(hits) != 0 {
		t.Fatalf("search finds the lost message: %+v, %v", hits, err)
	}
	if evs := bob.restoredEvents(); len(evs) != 1 || evs[0].Lost != 2 || evs[0].Resent != 1 {
		t.Fatalf("restored events: %+v", evs)
	}
}
