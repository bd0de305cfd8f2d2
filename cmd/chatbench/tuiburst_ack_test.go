package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/wire"
)

// TestMembersAckLikeAClient: a tui-burst group member acks a steady stream
// as the chat client does, a cumulative ack per delay, not one per message
// (every one of those became a boundary frame the measured TUI read and
// stored), and its last ack covers the last message.
func TestMembersAckLikeAClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &bench{}
	n, err := node.Start(ctx, b.nodeConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	d := newDialer(2)
	a := &api{base: n.URL(), hc: d.api}
	tokens, err := a.register(ctx, []string{"acksender", "ackmember"})
	if err != nil {
		t.Fatal(err)
	}
	group, err := a.createConversation(ctx, tokens[0], wire.CreateConversationRequest{Type: wire.Group, Name: "acks",
		Members: []string{"ackmember"}})
	if err != nil {
		t.Fatal(err)
	}
	member, err := d.dial(ctx, n.URL(), tokens[1])
	if err != nil {
		t.Fatal(err)
	}
	defer member.sock.CloseNow()
	var (
		mu   sync.Mutex
		acks []int64
	)
	const delay = 50 * time.Millisecond
	go ackLikeAClient(ctx, member, delay, func(ctx context.Context, f wire.Frame) error {
		if f.Type == wire.TypeAck && f.ConversationID == group {
			mu.Lock()
			acks = append(acks, f.SeqNo)
			mu.Unlock()
		}
		return member.write(ctx, f)
	})
	out, err := d.dial(ctx, n.URL(), tokens[0])
	if err != nil {
		t.Fatal(err)
	}
	defer out.sock.CloseNow()

	// 120 messages at 300 a second: 400 ms, eight or nine delays.
	const messages = 120
	if _, err := newBurstSender(ctx, out).send(ctx, group, messages, 300, "end"); err != nil {
		t.Fatal(err)
	}
	var got []int64
	pollUntil(t, "the last message acked", func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = append(got[:0], acks...)
		return len(got) > 0 && got[len(got)-1] == messages
	})
	t.Logf("%d acks for %d messages: %v", len(got), messages, got)
	// However slowly a loaded machine delivers them, at most one ack per
	// delay, and far fewer than a message each.
	if len(got) > messages/4 {
		t.Errorf("%d acks for %d messages: %v, want one per %v", len(got), messages, got, delay)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("acks %v: not cumulative", got)
		}
	}
}

// pollUntil polls cond until it holds or a generous deadline passes: what
// is checked is that it happens, not how fast.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
