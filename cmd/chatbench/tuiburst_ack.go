package main

import (
	"context"
	"sync"
	"time"

	"github.com/chatterm/chat/wire"
)

// ackLikeAClient reads a group member's frames and acks them as the chat
// client does (client/receive.go, ackAt): the first message not yet acked
// arms a timer of delay (client.DefaultAckDelay in tui-burst), and when it
// fires one cumulative ack per conversation goes, with the newest seq read by
// then. A member that acked every message as it arrived made the server move
// the group's delivered boundary, and send the TUI a frame, for nearly every
// message: up to 8 extra frames a message at a steady 200 msgs/s, which no
// group of real clients sends. write sends a frame on c (c's write; a test
// counts them).
func ackLikeAClient(ctx context.Context, c *wsConn, delay time.Duration, write func(context.Context, wire.Frame) error) {
	var (
		mu    sync.Mutex
		due   = map[string]int64{}
		timer *time.Timer
	)
	flush := func() {
		mu.Lock()
		acks := due
		due = map[string]int64{}
		timer = nil
		mu.Unlock()
		for conv, seq := range acks {
			if write(ctx, wire.Frame{Type: wire.TypeAck, ConversationID: conv, SeqNo: seq}) != nil {
				return // the connection ended with the run
			}
		}
	}
	for {
		f, err := c.read(ctx)
		if err != nil {
			return
		}
		if f.Type != wire.TypeMessage || f.Message == nil {
			continue
		}
		mu.Lock()
		if f.Message.SeqNo > due[f.Message.ConversationID] {
			due[f.Message.ConversationID] = f.Message.SeqNo
			if timer == nil {
				timer = time.AfterFunc(delay, flush)
			}
		}
		mu.Unlock()
	}
}
