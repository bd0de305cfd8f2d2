package tui

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// liveFixture is an inbox with bob's chat open at 100×40.
func liveFixture(t testing.TB) Model {
	t.Helper()
	be := fixture()
	m := New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC})
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	tm, _ = tm.Update(openConversationMsg{entry: wire.InboxEntry{ConversationID: bobConv, Type: wire.Direct, Peer: "bob"}})
	return tm.(Model)
}

// bytesPerUpdate is the heap bytes one Update of msg allocates, over n.
func bytesPerUpdate(tm tea.Model, msg tea.Msg, n int) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		tm, _ = tm.Update(msg)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(tm)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// The root model is tens of kilobytes; handed back from Update by value it is
// boxed into a new heap object per message. Live must not be.
func TestLiveUpdateDoesNotCopyTheModelToTheHeap(t *testing.T) {
	size := uint64(unsafe.Sizeof(Model{}))
	m := liveFixture(t)
	msg := tea.FocusMsg{}
	byValue := bytesPerUpdate(m, msg, 200)
	live := bytesPerUpdate(NewLive(m), msg, 200)
	t.Logf("Model is %d bytes; an Update allocates %d bytes by value, %d through Live", size, byValue, live)
	if byValue < size {
		t.Fatalf("an Update by value allocated %d bytes, less than the model's %d: this test no longer sees the copy", byValue, size)
	}
	if live >= size/4 {
		t.Fatalf("an Update through Live allocated %d bytes; the model is %d: it is still copied to the heap", live, size)
	}
}

// Live changes the state exactly as Model does: the same messages give the
// same screen.
func TestLiveUpdatesAsModelDoes(t *testing.T) {
	m := liveFixture(t)
	var byValue tea.Model = m
	var live tea.Model = NewLive(m)
	msgs := []tea.Msg{
		client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 1000, MessageID: "x1", SenderID: "bob", Content: "one more", Timestamp: fixtureNow}},
		tea.KeyPressMsg{Code: 'i', Text: "i"},
		tea.KeyPressMsg{Code: 'h', Text: "h"},
		tea.WindowSizeMsg{Width: 80, Height: 30},
		client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 1001, MessageID: "x2", SenderID: "bob", Content: "and another", Timestamp: fixtureNow}},
	}
	for i, msg := range msgs {
		byValue, _ = byValue.Update(msg)
		live, _ = live.Update(msg)
		if a, b := byValue.View().Content, live.View().Content; a != b {
			t.Fatalf("after message %d (%T) the screens differ:\nby value:\n%s\nlive:\n%s", i, msg, a, b)
		}
	}
	if _, ok := live.(*Live); !ok {
		t.Fatalf("Live.Update returned %T, want *Live", live)
	}
	if got := fmt.Sprint(live.(*Live).Model().chat.conv.ConversationID); got != bobConv {
		t.Fatalf("the live model's open chat is %q, want %q", got, bobConv)
	}
}
