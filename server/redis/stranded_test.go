package redis_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/prometheus/client_golang/prometheus/testutil"
	goredis "github.com/redis/go-redis/v9"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/wire"
)

// forgetBob deletes bob's registry entry behind node-b's back (a flush, a
// failover to an empty replica): node-a then takes him for offline and
// publishes nothing to node-b.
func (c *cluster) forgetBob(ctx context.Context, t *testing.T) {
	t.Helper()
	raw := goredis.NewClient(&goredis.Options{Addr: c.prod.RedisAddrs[0]})
	defer raw.Close()
	// Node-b's keeper "restores" its entries at its first heartbeat (its marker
	// key is not set yet): once the marker is there it takes the registry for
	// intact, and only the paths under test can bring bob his message.
	testenv.WaitFor(t, 15*time.Second, func() bool {
		n, err := raw.Exists(ctx, c.prod.RedisPrefix+"registered:{node-b}").Result()
		return err == nil && n == 1
	})
	if err := raw.Del(ctx, c.prod.RedisPrefix+"reg:{bob}").Err(); err != nil {
		t.Fatal(err)
	}
	if where, err := c.rc.Registry().Nodes(ctx, []string{"bob"}); err != nil || len(where) != 0 {
		t.Fatalf("registry after the delete: %v, %v", where, err)
	}
}

func (c *cluster) send(t *testing.T, id, text string) wire.SendResponse {
	t.Helper()
	var sent wire.SendResponse
	if st := c.alice.do("POST", "/v1/conversations/"+c.conv+"/messages", wire.SendRequest{MessageID: id, Content: text}, &sent); st != http.StatusCreated {
		t.Fatalf("send: %d", st)
	}
	return sent
}

func waitMessage(t *testing.T, frames chan wire.Frame, seq int64, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("bob's socket closed before the message arrived")
			}
			if f.Type == wire.TypeMessage && f.Message != nil && f.Message.SeqNo == seq {
				return
			}
		case <-deadline:
			t.Fatalf("message %d never reached bob's socket on node-b within %s", seq, within)
		}
	}
}

// stranded is two nodes with bob live on node-b, his registry entry deleted,
// and a message alice sent on node-a meanwhile: stored, published to no one.
func stranded(t *testing.T) (*cluster, chan wire.Frame, wire.SendResponse) {
	t.Helper()
	c := twoNodes(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	t.Cleanup(cancel)
	_, frames, _ := c.bobOnB(ctx, t)
	c.forgetBob(ctx, t)
	return c, frames, c.send(t, "while-forgotten", "are you there?")
}

// A message stored while bob's registry entry was missing (node-a published
// nothing) still reaches his live socket on node-b: node-b's delivery worker
// reads its connections' pending rows once per sweep period.
func TestNoMessageStrandedWhenRegistryEntryMissing(t *testing.T) {
	_, frames, sent := stranded(t)
	// The sweep period is 10 × RedeliverAfter (1 s in tests), its first pass a
	// random time into it, and a pass skips messages younger than 1 s: at
	// worst about two periods.
	waitMessage(t, frames, sent.SeqNo, 40*time.Second)
}

// When node-b's pub/sub connection breaks, what was published meanwhile is
// gone; the resubscription tells node-b, which catches its connections up at
// once instead of leaving them to the sweep.
func TestLostSubscriptionCatchesUp(t *testing.T) {
	c, frames, sent := stranded(t)
	ctx := t.Context()
	resyncs := c.b.Node.Service().Config().Metrics.Resyncs
	before := testutil.ToFloat64(resyncs)
	raw := goredis.NewClient(&goredis.Options{Addr: c.prod.RedisAddrs[0]})
	defer raw.Close()
	if err := raw.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, func() bool { return testutil.ToFloat64(resyncs) > before })
	waitMessage(t, frames, sent.SeqNo, 5*time.Second)
	// Then a resync frame: a copy another device of bob's acked is in no
	// pending row, and only the device's own sync brings it.
	deadline := time.After(5 * time.Second)
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("bob's socket closed before the resync frame")
			}
			if f.Type == wire.TypeResync {
				return
			}
		case <-deadline:
			t.Fatal("no resync frame reached bob's socket on node-b")
		}
	}
}

// The case reliability was built for: bob stays connected to node-b while
// Redis is down; alice sends three messages on node-a, each stored and
// acknowledged, and sends nothing after. All three reach bob's socket on
// node-b, without a reconnect and without a later message to show him a gap:
// when Redis comes back (node-b's resubscription catches its connections up),
// and also while it stays down (node-b's sweep reads its connections' pending
// rows from the store).
func TestRedisDownOneWayMessagesReachConnectedReceiver(t *testing.T) {
	for _, back := range []bool{true, false} {
		name := map[bool]string{true: "redis back", false: "redis stays down"}[back]
		t.Run(name, func(t *testing.T) {
			r := startOwnRedis(t)
			c := twoNodesOn(t, r.addr())
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			_, frames, readErr := c.bobOnB(ctx, t)
			r.stop()
			var sent []wire.SendResponse
			for _, id := range []string{"one", "two", "three"} {
				// A send may be refused while node-a's Redis calls time out (a
				// retryable answer); alice's client sends it again, as here.
				testenv.WaitFor(t, 30*time.Second, func() bool {
					var resp wire.SendResponse
					if st := c.alice.do("POST", "/v1/conversations/"+c.conv+"/messages", wire.SendRequest{MessageID: id, Content: id}, &resp); st != http.StatusCreated && st != http.StatusOK {
						return false
					}
					sent = append(sent, resp)
					return true
				})
			}
			if back {
				r.start()
			}
			for _, s := range sent {
				// The sweep: 10 × RedeliverAfter (1 s in tests), the first pass
				// at a random point of it; at worst about two periods.
				waitMessage(t, frames, s.SeqNo, 40*time.Second)
			}
			if *readErr != nil {
				t.Fatalf("bob's socket ended: %v", *readErr)
			}
		})
	}
}

// Bob has two devices: one on node-a, where alice sends, and one on node-b.
// While Redis is down the device on node-a gets each message live and acks
// it, which clears bob's pending row; the device on node-b must still get it
// without waiting for Redis. Node-b's sweep, unable to read the registry,
// compares its device's own position in the conversation (from its sync and
// acks) with the conversation's last stored message, instead of trusting a
// pending row another device's ack cleared.
func TestRedisDownSecondDeviceGetsWhatTheFirstAcked(t *testing.T) {
	r := startOwnRedis(t)
	c := twoNodesOn(t, r.addr())
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	_, frames, readErr := c.bobOnB(ctx, t)
	onA := c.bobAckingOn(ctx, t, c.a.URL)
	r.stop()
	var sent wire.SendResponse
	testenv.WaitFor(t, 30*time.Second, func() bool {
		st := c.alice.do("POST", "/v1/conversations/"+c.conv+"/messages", wire.SendRequest{MessageID: "while-down", Content: "two devices"}, &sent)
		return st == http.StatusCreated || st == http.StatusOK
	})
	// Bob's device on node-a acked it: his pending row is gone.
	testenv.WaitFor(t, 20*time.Second, func() bool { return onA.acked.Load() >= sent.SeqNo })
	testenv.WaitFor(t, 20*time.Second, func() bool {
		var st wire.StatusResponse
		if c.alice.do("GET", "/v1/conversations/"+c.conv+"/status", nil, &st) != http.StatusOK {
			return false
		}
		for _, m := range st.Members {
			if m.UserID == "bob" && m.LastDeliveredSeq >= sent.SeqNo {
				return true
			}
		}
		return false
	})
	// The sweep: 10 × RedeliverAfter (1 s in tests), its first pass at a
	// random point of it; at worst about two periods.
	waitMessage(t, frames, sent.SeqNo, 40*time.Second)
	if *readErr != nil {
		t.Fatalf("bob's socket on node-b ended: %v", *readErr)
	}
}

// ackingDevice is a socket of bob's that acks every message it gets.
type ackingDevice struct{ acked atomic.Int64 }

// bobAckingOn connects another device of bob's to the node at base; it syncs
// the conversation, then acks each message as it comes.
func (c *cluster) bobAckingOn(ctx context.Context, t *testing.T, base string) *ackingDevice {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.bob.token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	d := &ackingDevice{}
	sync, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeSync, ID: "s1", Cursors: []wire.Cursor{{ConversationID: c.conv}}})
	if err := ws.Write(ctx, websocket.MessageText, sync); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			for line := range wire.Frames(data) {
				f, err := wire.DecodeFrame(line)
				if err != nil || f.Type != wire.TypeMessage || f.Message == nil {
					continue
				}
				ack, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeAck, ConversationID: f.Message.ConversationID, SeqNo: f.Message.SeqNo})
				if ws.Write(ctx, websocket.MessageText, ack) != nil {
					return
				}
				d.acked.Store(f.Message.SeqNo)
			}
		}
	}()
	return d
}
