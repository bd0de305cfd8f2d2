package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The proxy's one-at-a-time holds until the backend has answered, not until
// the caller gave up: moto goes on with a request whose caller timed out, and
// a second request let in meanwhile would overlap it (two transactions at
// once, the snapshot restore undoing the other's writes). The backend here
// finishes each request whatever its caller does, as moto's does.
func TestDynamoProxyOneAtATimeOutlastsACallerThatGaveUp(t *testing.T) {
	var inFlight, most atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(300 * time.Millisecond)
		inFlight.Add(-1)
	}))
	defer backend.Close()
	p, err := newDynamoProxy(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()

	impatient, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(impatient, "POST", p.url(), nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the impatient call got an answer before the backend's 300 ms")
	}
	start := time.Now()
	resp, err := http.Post(p.url(), "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if m := most.Load(); m != 1 {
		t.Fatalf("the backend ran %d requests at once, want 1 (the second let in while the first, given up by its caller, still ran)", m)
	}
	t.Logf("the second call waited %v", time.Since(start))
}
