package client_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
)

// BenchmarkSessionRoundTrip measures the whole client path: alice's session
// queues b.N messages (outbox first), the server stores them, bob's session
// stores each in its cache and acks it; the clock stops when bob has them all
// and alice's outbox is empty.
func BenchmarkSessionRoundTrip(b *testing.B) {
	srv := servertest.Start(b)
	aliceAPI, bobAPI := register(b, srv, "alice"), register(b, srv, "bob")
	conv, err := aliceAPI.Direct(context.Background(), "bob")
	if err != nil {
		b.Fatal(err)
	}
	alice := benchDevice(b, aliceAPI, "alice")
	bob := benchDevice(b, bobAPI, "bob")
	testenv.WaitFor(b, time.Minute, func() bool {
		return alice.State().Status == client.Connected && bob.State().Status == client.Connected
	})
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := alice.Enqueue(context.Background(), conv.ConversationID, fmt.Sprint("message ", i)); err != nil {
			b.Fatal(err)
		}
	}
	testenv.WaitFor(b, time.Minute, func() bool {
		n, _ := bob.Store().LatestSeq(context.Background(), conv.ConversationID)
		return n >= int64(b.N) && alice.State().Unsent == 0
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// benchDevice runs a session that drains its events, until the benchmark ends.
func benchDevice(b *testing.B, api *client.API, user string) *client.Session {
	store, err := localstore.Open(context.Background(), filepath.Join(b.TempDir(), "cache.db"), localstore.Options{UserID: user})
	if err != nil {
		b.Fatal(err)
	}
	sess := client.NewSession(client.SessionConfig{API: api, Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess.Run(ctx)
	}()
	go func() {
		for {
			select {
			case <-sess.Events():
			case <-ctx.Done():
				return
			}
		}
	}()
	b.Cleanup(func() {
		cancel()
		<-done
		store.Close()
	})
	return sess
}
