package redis_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/wire"
)

// While Redis stays down, messages stored on node-a reach bob's live socket
// on node-b through node-b's sweep alone, and node-b sweeps every grace
// period for as long as its registry is down, not once per sweep period: each
// message arrives within a few grace periods of its send. Five messages two
// seconds apart span most of a sweep period (10 × RedeliverAfter, 1 s here),
// so a sweep on the ordinary period leaves at least one of them 8 s or more
// behind; the bound checked is 5 grace periods.
func TestRedisDownDeliveryDelayIsBounded(t *testing.T) {
	const grace = time.Second // servertest's RedeliverAfter
	r := startOwnRedis(t)
	c := twoNodesOn(t, r.addr())
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	_, frames, readErr := c.bobOnB(ctx, t)

	var mu sync.Mutex
	arrived := map[int64]time.Time{}
	go func() {
		for f := range frames {
			if f.Type == wire.TypeMessage && f.Message != nil {
				mu.Lock()
				if _, seen := arrived[f.Message.SeqNo]; !seen {
					arrived[f.Message.SeqNo] = time.Now()
				}
				mu.Unlock()
			}
		}
	}()

	r.stop()
	// Node-b has noticed once its registry read fails (its breaker opens).
	testenv.WaitFor(t, 30*time.Second, func() bool {
		return c.b.Node.Service().RegistryDown(ctx, "bob")
	})
	sentAt := map[int64]time.Time{}
	for i := range 5 {
		id := "down-" + string(rune('a'+i))
		// A send may be refused while node-a's Redis calls time out; the
		// client sends it again, as here. Its delay counts from the answer.
		var resp wire.SendResponse
		testenv.WaitFor(t, 30*time.Second, func() bool {
			st := c.alice.do("POST", "/v1/conversations/"+c.conv+"/messages", wire.SendRequest{MessageID: id, Content: id}, &resp)
			return st == http.StatusCreated || st == http.StatusOK
		})
		sentAt[resp.SeqNo] = time.Now()
		time.Sleep(2 * time.Second)
	}
	testenv.WaitFor(t, 40*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrived) >= len(sentAt)
	})
	mu.Lock()
	defer mu.Unlock()
	for seq, at := range sentAt {
		got, ok := arrived[seq]
		if !ok {
			t.Fatalf("message %d never reached bob on node-b", seq)
		}
		if d := got.Sub(at); d > 5*grace {
			t.Errorf("message %d reached bob %v after its send with Redis down; want within %v (5 grace periods)", seq, d.Round(100*time.Millisecond), 5*grace)
		} else {
			t.Logf("message %d: %v", seq, d.Round(100*time.Millisecond))
		}
	}
	if *readErr != nil {
		t.Fatalf("bob's socket on node-b ended: %v", *readErr)
	}
}
