package client

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// net/http dials on a goroutine of its own that outlives a cancelled
// request; the gate's dial wrapper is the session's code, so dial ends it and
// waits for it: when dial returns, no dial of its own is still running (a
// session's Run leaves nothing behind, TestRunLeavesNothingBehind).
func TestGatedDialEndsItsDials(t *testing.T) {
	entered := make(chan struct{})
	var returned atomic.Bool
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			close(entered)
			<-ctx.Done() // a connect that never completes
			returned.Store(true)
			return nil, ctx.Err()
		},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	if _, err := dial(ctx, "http://127.0.0.1:1", "token", hc, true); err == nil {
		t.Fatal("a dial that never connected succeeded")
	}
	if !returned.Load() {
		t.Fatal("dial returned while the transport's dial of the gate was still running")
	}
}
