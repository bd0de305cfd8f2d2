package redis_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/wire"
)

// With registry updates through Kafka (kfake: an in-process cluster speaking
// the Kafka protocol) and workers that never get to apply them (every fetch
// fails), bob's connection on node-b never reaches the registry; a message
// alice sends on node-a still reaches him: delivery does not depend on the
// queue's lag, only its live path does (docs/production.md).
func TestQueueLagDoesNotStrandMessages(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	kc.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		return nil, errors.New("fetch refused: the workers lag"), true
	})
	c := twoNodesOn(t, addr(t), func(cfg *node.Config) {
		cfg.Production.KafkaBrokers, cfg.Production.KafkaTopic = kc.ListenAddrs(), "lag"
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, strings.Replace(c.b.URL, "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.bob.token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	frames := make(chan wire.Frame, 64)
	go func() {
		defer close(frames)
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			for line := range wire.Frames(data) {
				if f, err := wire.DecodeFrame(line); err == nil {
					frames <- f
				}
			}
		}
	}()
	// Bob's connect is past its catch-up once a sync is answered.
	sync, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeSync, ID: "s1", Cursors: []wire.Cursor{{ConversationID: c.conv}}})
	if err := ws.Write(ctx, websocket.MessageText, sync); err != nil {
		t.Fatal(err)
	}
	for f := range frames {
		if f.Type == wire.TypeSynced || f.Type == wire.TypeError {
			break
		}
	}
	if where, err := c.rc.Registry().Nodes(ctx, []string{"bob"}); err != nil || len(where) != 0 {
		t.Fatalf("registry = %v, %v: bob's entry was applied, so the test tests nothing", where, err)
	}
	sent := c.send(t, "lag-1", "while the queue lags")
	// Node-b's sweep: 10 × RedeliverAfter (1 s in tests), its first pass at a
	// random point of the period.
	waitMessage(t, frames, sent.SeqNo, 15*time.Second)
}
