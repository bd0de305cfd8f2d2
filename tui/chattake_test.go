package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// bobStream is n messages of bob's after the fixture's 7, as one commit.
func bobStream(first int64, n int) []wire.Message {
	var msgs []wire.Message
	for i := range n {
		seq := first + int64(i)
		msgs = append(msgs, wire.Message{ConversationID: bobConv, SeqNo: seq, MessageID: fmt.Sprint("s", seq), SenderID: "bob",
			Content: fmt.Sprintf("stream line %d", seq), Timestamp: fixtureNow.Add(time.Duration(i) * time.Second)})
	}
	return msgs
}

// A commit's messages into the open chat, read at the bottom, are drawn once
// and leave the screen and the read boundary as the same messages one at a
// time do.
func TestChatDrawsACommitOnce(t *testing.T) {
	msgs := bobStream(8, 40)
	run := func(batched bool) (*harness, int) {
		be := fixture()
		h := newHarness(t, be, 100, 30)
		h.key("enter") // bob, at the bottom
		be.mu.Lock()
		be.msgs[bobConv] = append(be.msgs[bobConv], msgs...)
		be.mu.Unlock()
		draws := h.root().chat.draws
		if batched {
			h.send(client.MessagesEvent{Messages: msgs})
		} else {
			evs := eventBatchMsg{}
			for _, m := range msgs {
				evs = append(evs, client.MessageEvent{Message: m})
			}
			h.send(evs)
		}
		return h, h.root().chat.draws - draws
	}
	one, oneDraws := run(false)
	batch, batchDraws := run(true)
	if oneDraws < len(msgs) {
		t.Fatalf("one at a time drew %d times for %d messages: the test no longer sees a drawing per message", oneDraws, len(msgs))
	}
	if batchDraws != 1 {
		t.Fatalf("a commit of %d messages at the bottom drew the chat %d times, want once", len(msgs), batchDraws)
	}
	if got, want := batch.screen(), one.screen(); got != want {
		t.Fatalf("the screen after a commit:\n%s\nwant as after its messages one at a time:\n%s", got, want)
	}
	if got, want := batch.root().chat.readSent, one.root().chat.readSent; got != want || got != msgs[len(msgs)-1].SeqNo {
		t.Fatalf("read boundary sent after a commit %d, one at a time %d, want the newest %d", got, want, msgs[len(msgs)-1].SeqNo)
	}
}

// A reader scrolled up keeps their place: the messages land below, the
// lines on screen stay, and the "new below" count is each visible message.
func TestChatCommitKeepsAScrolledReadersPlace(t *testing.T) {
	be := fixture()
	h := newHarness(t, be, 100, 12)
	h.key("enter")
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	before := h.root().chat
	if before.offset == 0 {
		t.Fatal("the wheel did not scroll the chat up: the test tests nothing")
	}
	msgs := bobStream(8, 5)
	be.mu.Lock()
	be.msgs[bobConv] = append(be.msgs[bobConv], msgs...)
	be.mu.Unlock()
	h.send(client.MessagesEvent{Messages: msgs})
	after := h.root().chat
	if after.newHere != before.newHere+len(msgs) {
		t.Fatalf("%d new below after %d messages, was %d", after.newHere, len(msgs), before.newHere)
	}
	if after.offset <= before.offset {
		t.Fatalf("offset %d → %d: the lines on screen moved with the messages below", before.offset, after.offset)
	}
}
