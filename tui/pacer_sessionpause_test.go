package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// streamThenLast runs bob's chat in a real program with the stream's frame,
// the pacer's quiet timer and (once the stream is seen) the idle check all
// an hour, so that nothing but the session's pause can draw the stream's
// last message; it streams until Views are being withheld, then sends last
// (the message and whatever comes with it) and reports whether the last
// message reached the screen within 5 s.
func streamThenLast(t *testing.T, last func(p *tea.Program, m client.MessageEvent)) bool {
	t.Helper()
	f := NewFramePacer(30)
	f.sleep, f.streamFrame, f.streamQuiet = time.Hour, time.Hour, time.Hour
	p, out := pacedChat(t, f)
	eventually(t, "the chat drawn", func() bool { return out.contains("bob") })
	seq, _, _ := streamUntilWithheld(t, f, p, 20)
	last(p, client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: int64(seq),
		MessageID: "last", SenderID: "bob", Content: "the stream is over", Timestamp: fixtureNow}})
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if out.contains("the stream is over") {
			return true
		}
	}
	return false
}

// The session's word that its stream paused, coming alone after the last
// message, draws that message at once.
func TestSessionPauseDrawsTheLastMessage(t *testing.T) {
	if !streamThenLast(t, func(p *tea.Program, m client.MessageEvent) {
		p.Send(m)
		p.Send(client.StreamPausedEvent{})
	}) {
		t.Fatal("the stream's last message was not drawn within 5 s of the pause")
	}
}

// The pause in one batch of events with the last message (the UI was
// behind): the batch's View is decided before the pause is told, so the
// View withheld there is the one drawn.
func TestSessionPauseInABatchDrawsItsView(t *testing.T) {
	if !streamThenLast(t, func(p *tea.Program, m client.MessageEvent) {
		p.Send(eventBatchMsg{m, client.StreamPausedEvent{}})
	}) {
		t.Fatal("the stream's last message, in a batch with the pause, was not drawn within 5 s")
	}
}

// The pause alone changes nothing: its View is the last one, not a View
// for the stream's count; the pacer counts the pause.
func TestStreamPausedEventIsNotAView(t *testing.T) {
	f := NewFramePacer(30)
	tk := time.NewTicker(time.Hour)
	defer tk.Stop()
	f.field, f.ticker = &tk, tk
	f.sleep, f.streamFrame, f.streamQuiet = time.Hour, time.Hour, time.Hour
	h := newHarnessWith(t, newFakeBackend("alice", fixtureNow), 80, 24, func(o *Options) { o.Pacer = f })
	l := NewLive(h.root())
	l.View()
	f.mu.Lock()
	f.streaming = true
	views := f.views
	f.mu.Unlock()
	l.Update(client.StreamPausedEvent{})
	l.View()
	eventually(t, "the pause counted", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.pauses == 1
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.views != views {
		t.Fatalf("the pause's View counted: views %d → %d", views, f.views)
	}
	if f.check != nil {
		f.check.Stop()
	}
}

// The pause alone still has the model wait for the next event: Live hands
// it to the model, whose Update re-arms the event pump. Swallowed, no
// event after it was ever read (the first version: the TUI stopped taking
// messages after the first pause).
func TestStreamPausedEventKeepsThePumpGoing(t *testing.T) {
	be := newFakeBackend("alice", fixtureNow)
	t.Cleanup(func() { close(be.events) })
	// A model whose Init never ran: nothing else reads the events.
	l := NewLive(New(Options{Backend: be, Now: func() time.Time { return fixtureNow }, Location: time.UTC, Dark: true, PageSize: 50}))
	next := client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: 1, MessageID: "after",
		SenderID: "bob", Content: "after the pause", Timestamp: fixtureNow}}
	go func() { be.events <- next }()
	_, cmd := l.Update(client.StreamPausedEvent{})
	if cmd == nil {
		t.Fatal("the pause's Update returned no command: nothing waits for the next event")
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case msg := <-got:
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				if c == nil {
					continue
				}
				go func() { got <- c() }()
			}
			select {
			case msg = <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("no command of the pause's Update read the next event")
			}
		}
		if ev, ok := msg.(client.MessageEvent); !ok || ev.Message.MessageID != "after" {
			t.Fatalf("the pause's command gave %#v, want the next event", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pause's command read nothing in 5 s")
	}
}
