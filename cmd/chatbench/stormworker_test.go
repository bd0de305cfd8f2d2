package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/server/node"
)

// The storm's clients split over worker processes of at most N each, whose
// reports the parent sums: five clients at two a worker are three processes,
// and every client gets its hello and holds its socket until the fleet closes.
func TestStormWorkersSplitAndSum(t *testing.T) {
	ctx := context.Background()
	b := &bench{dial: newDialer(1)}
	n, err := node.Start(ctx, b.nodeConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	tokens, err := (&api{base: n.URL(), hc: b.dial.api}).register(ctx, []string{"w0", "w1", "w2", "w3", "w4"})
	if err != nil {
		t.Fatal(err)
	}
	var clients []stormClient
	for _, tok := range tokens {
		clients = append(clients, stormClient{URL: n.URL(), Token: tok})
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := startStormWorkers(exe, clients, 2, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.close()
	if len(fleet.workers) != 3 {
		t.Fatalf("%d workers for 5 clients at 2 each, want 3", len(fleet.workers))
	}
	rep, err := fleet.storm(time.Now().Add(100 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Workers != 3 || len(rep.HelloMs) != 5 || rep.failed() != 0 {
		t.Fatalf("summed report %+v: want 3 workers, 5 hellos, no failure", rep)
	}
	if got := liveConnections(t, b, n.URL()); got != 5 {
		t.Errorf("the node holds %v connections after the storm, want the 5 clients'", got)
	}
	if err := fleet.close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for liveConnections(t, b, n.URL()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the workers' connections are still open 10 s after the fleet closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that cannot connect is counted by kind, not fatal to the storm.
func TestStormWorkerCountsFailures(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A port nothing listens on: the dial is refused.
	fleet, err := startStormWorkers(exe, []stormClient{{URL: "http://127.0.0.1:1", Token: "x"}, {URL: "http://127.0.0.1:1", Token: "y"}}, 5, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.close()
	rep, err := fleet.storm(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rep.failed() != 2 || rep.Errors["connection refused"] != 2 || !strings.Contains(rep.Examples["connection refused"], "refused") {
		t.Fatalf("report %+v: want two clients failed, refused", rep)
	}
}

func liveConnections(t *testing.T, b *bench, url string) float64 {
	t.Helper()
	m, err := b.scrape(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return m["chat_connections"]
}

// Failures sum by kind: the errors a storm's dial returns, as the libraries
// wrap them.
func TestStormErrorKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("dial ws://x/v1/ws: failed to WebSocket dial: failed to send handshake request: Get \"http://x/v1/ws\": %w", io.EOF), "closed by the server"},
		{errors.New(`failed to send handshake request: Get "http://x/v1/ws": http: server closed idle connection`), "closed by the server"},
		{fmt.Errorf("dial: %w", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), "connection reset"},
		{fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), "connection refused"},
		{fmt.Errorf("wait for hello: %w", context.DeadlineExceeded), "timeout"},
		{errors.New(`first frame is "resync", want hello`), "first frame not hello"},
		{errors.New("failed to WebSocket dial: expected handshake response status code 101 but got 503"), "upgrade refused: HTTP 503"},
		{errors.New("something else"), "other"},
	} {
		if got := errorKind(c.err); got != c.want {
			t.Errorf("errorKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
