package redis_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/wire"
)

// Typing crosses nodes: alice on node-a types, bob on node-b sees it, through
// the registry and pub/sub like a message, and nothing is stored.
func TestTypingCrossesNodes(t *testing.T) {
	c := twoNodes(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, frames, _ := c.bobOnB(ctx, t)
	ws, _, err := websocket.Dial(ctx, strings.Replace(c.a.URL, "http", "ws", 1)+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.alice.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	typing, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeTyping, ConversationID: c.conv})
	if err := ws.Write(ctx, websocket.MessageText, typing); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatal("bob's socket closed")
			}
			got = f.Type == wire.TypeTyping && f.ConversationID == c.conv && f.UserID == "alice"
		case <-deadline:
			t.Fatal("alice's typing did not reach bob on node-b within 10s")
		}
	}
	var h wire.HistoryResponse
	if st := c.bob.do("GET", "/v1/conversations/"+c.conv+"/messages", nil, &h); st != http.StatusOK || len(h.Messages) != 0 {
		t.Fatalf("history after typing: %d %+v, want no messages", st, h.Messages)
	}
}
