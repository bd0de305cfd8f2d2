package client_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// Received messages commit without a disk sync (localstore/durability.go):
// a power cut may take the last of them back after they were acked, and the
// server does not send an acked message live again. Nothing is lost all the
// same, because the sync cursor is in the same commits: the cache comes back
// as it was before the batch, cursor included, and the next connect's sync
// asks from there. Here the power cut is a cache put back to a copy taken
// before the batch.
func TestSessionRefetchesABatchLostAfterItsAck(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	path := filepath.Join(t.TempDir(), "cache.db")
	send := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// connect runs bob's session on the cache at path until it holds want
	// messages, has reported news of them and the server has bob's ack of the
	// newest, then stops it.
	connect := func(want, news int) []wire.Message {
		t.Helper()
		store, err := localstore.Open(bg, path, localstore.Options{UserID: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		ctx, cancel := context.WithCancel(bg)
		sess := client.NewSession(client.SessionConfig{API: client.NewAPI(srv.URL, bobAPI.Token(), httpClient(t)), Store: store,
			Backoff: fastBackoff, AckDelay: -1, Logger: testLogger(t, "bob")})
		done := make(chan error, 1)
		go func() { done <- sess.Run(ctx) }()
		defer func() {
			cancel()
			<-done
		}()
		var events []wire.Message
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev := <-sess.Events():
				if m, ok := ev.(client.MessageEvent); ok {
					events = append(events, m.Message)
				}
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				t.Fatalf("bob's cache did not reach %d messages acked; events %v", want, events)
			}
			cached, err := store.MessagesAfter(bg, conv, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(cached) == want && len(events) >= news && deliveredTo(t, aliceAPI, conv, "bob") == int64(want) {
				return events
			}
		}
	}

	send("m1")
	connect(1, 1)
	snapshot := copyCache(t, path)
	send("m2", "m3")
	connect(3, 2) // stored, then acked: the server will not send m2 and m3 live again
	restoreCache(t, snapshot, path)

	again := connect(3, 2)
	var got []string
	for _, m := range again {
		got = append(got, fmt.Sprintf("%s@%d", m.MessageID, m.SeqNo))
	}
	if want := []string{"m2@2", "m3@3"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the cache lost its last batch the session delivered %v, want %v, once each and in order", got, want)
	}
}

// deliveredTo is the member's delivered boundary as the server has it.
func deliveredTo(t *testing.T, api *client.API, conv, user string) int64 {
	t.Helper()
	resp, err := api.Status(bg, conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range resp.Members {
		if st.UserID == user {
			return st.LastDeliveredSeq
		}
	}
	return 0
}

// copyCache copies a closed cache's files (the database and its WAL) aside.
func copyCache(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, filepath.Join(dir, "cache.db"+suffix))
	}
	return filepath.Join(dir, "cache.db")
}

// restoreCache puts a copy back in place of a closed cache, as a power cut
// leaves a database whose last commits never reached the disk.
func restoreCache(t *testing.T, from, path string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, from+suffix, path+suffix)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if os.IsNotExist(err) {
		return // a WAL checkpointed away on close
	}
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// An ack says "stored here": a batch the cache refuses is not acked (the
// server keeps it and sends it again), and once the cache takes it, it is.
func TestSessionAcksOnlyWhatItStored(t *testing.T) {
	srv := servertest.Start(t)
	aliceAPI, bobAPI := register(t, srv, "alice"), register(t, srv, "bob")
	conv := direct(t, aliceAPI, "bob")
	path := filepath.Join(t.TempDir(), "cache.db")
	store, err := localstore.Open(bg, path, localstore.Options{UserID: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// Another connection to the same file makes every insert fail, as a full
	// disk would.
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'disk full'); END`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	sess := client.NewSession(client.SessionConfig{API: client.NewAPI(srv.URL, bobAPI.Token(), httpClient(t)), Store: store,
		Backoff: fastBackoff, AckDelay: -1, Logger: testLogger(t, "bob")})
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	go func() {
		for range sess.Events() {
		}
	}()
	for _, id := range []string{"m1", "m2"} {
		if _, _, err := aliceAPI.SendMessage(bg, conv, wire.SendRequest{MessageID: id, Content: id}); err != nil {
			t.Fatal(err)
		}
	}
	// Long enough for several deliveries, refusals and reconnects.
	time.Sleep(500 * time.Millisecond)
	if n := deliveredTo(t, aliceAPI, conv, "bob"); n != 0 {
		t.Fatalf("the server has bob's delivery up to %d, though his cache refused every message", n)
	}
	if _, err := raw.Exec(`DROP TRIGGER refuse`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for deliveredTo(t, aliceAPI, conv, "bob") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("bob's delivery is at %d, want 2 once his cache takes the messages", deliveredTo(t, aliceAPI, conv, "bob"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cached, err := store.MessagesAfter(bg, conv, 0, 10)
	if err != nil || len(cached) != 2 {
		t.Fatalf("cached %v, %v: want both messages", cached, err)
	}
}
