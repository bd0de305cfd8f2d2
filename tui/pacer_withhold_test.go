package tui

import (
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// startedLive is a Live whose Init starts nothing: the fixture's state is
// the test's, not the fake backend's loads.
type startedLive struct{ *Live }

func (startedLive) Init() tea.Cmd { return nil }

// pacedChat runs bob's chat, open, in a real program with f attached.
func pacedChat(t *testing.T, f *FramePacer) (*tea.Program, *lockedBuffer) {
	t.Helper()
	h := newHarnessWith(t, fixture(), 80, 24, func(o *Options) { o.Pacer = f })
	openChat(h, bobConv)
	return runPacedModelSized(t, f, startedLive{NewLive(h.root())}, 80, 24)
}

// streamFrom sends bob's chat a message every 5 ms, from seq, until stop is
// closed; done gives the next seq.
func streamFrom(p *tea.Program, seq int, stop <-chan struct{}) (done <-chan int) {
	next := make(chan int, 1)
	go func() {
		defer func() { next <- seq }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				p.Send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: int64(seq),
					MessageID: "s" + strconv.Itoa(seq), SenderID: "bob", Content: "message " + strconv.Itoa(seq), Timestamp: fixtureNow}})
				seq++
			}
		}
	}()
	return next
}

// streamUntilWithheld streams into bob's chat until the stream is seen, then
// keeps it from ending (the idle check's window an hour from the check after
// next) and streams on until n more Views were withheld; it stops the stream
// and gives the next seq and the Views withheld and drawn meanwhile.
func streamUntilWithheld(t *testing.T, f *FramePacer, p *tea.Program, n int) (seq, withheld, drawn int) {
	t.Helper()
	stop := make(chan struct{})
	next := streamFrom(p, 1000, stop)
	eventually(t, "a stream", func() bool { _, streaming, _ := f.pacerState(); return streaming })
	f.mu.Lock()
	f.idleAfter = time.Hour // from the check after next: the stream never ends here
	f.mu.Unlock()
	withheld0, drawn0 := f.viewCounts()
	eventually(t, "Views withheld", func() bool { w, _ := f.viewCounts(); return w >= withheld0+n })
	withheld, drawn = f.viewCounts()
	close(stop)
	return <-next, withheld - withheld0, drawn - drawn0
}

func (f *FramePacer) viewCounts() (withheld, drawn int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.withheld, f.drawn
}

// TestStreamWithholdsViews: during a stream the chat's View is not drawn
// for every message (the renderer would show only one in three), and the
// stream's last message is on the screen all the same. The stream's frame is
// an hour here, and once the stream is seen so is the idle check's window,
// so only the pause's ask can bring the last message.
func TestStreamWithholdsViews(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep, f.streamFrame = time.Hour, time.Hour
	p, out := pacedChat(t, f)
	eventually(t, "the chat drawn", func() bool { return out.contains("bob") })

	seq, withheld, drawn := streamUntilWithheld(t, f, p, 80)
	if drawn >= withheld {
		t.Fatalf("during a stream %d Views were drawn and %d withheld: want most withheld", drawn, withheld)
	}
	p.Send(client.MessageEvent{Message: wire.Message{ConversationID: bobConv, SeqNo: int64(seq),
		MessageID: "last", SenderID: "bob", Content: "the stream is over", Timestamp: fixtureNow}})
	eventually(t, "the stream's last message on the screen", func() bool { return out.contains("the stream is over") })
}

// TestStreamFramesKeepComing: while a stream runs, Views withheld, the pacer
// asks for a frame before each of the renderer's ticks, so the screen follows
// the stream and does not wait for its end; the ticker draws them at its
// period, not at once (a frame drawn at once costs the ticker a few short
// ticks and a timer: that is for a stream's pause and end only).
func TestStreamFramesKeepComing(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour
	p, out := pacedChat(t, f)
	eventually(t, "the chat drawn", func() bool { return out.contains("bob") })

	stop := make(chan struct{})
	next := streamFrom(p, 1000, stop)
	defer func() { close(stop); <-next }()
	eventually(t, "Views withheld", func() bool { w, _ := f.viewCounts(); return w > 0 })
	f.mu.Lock()
	drawn, soons, pauses := f.drawn, f.soons, f.pauses
	f.mu.Unlock()
	eventually(t, "frames drawn during the stream", func() bool {
		w, d := f.viewCounts()
		return d >= drawn+3 && w > 0
	})
	f.mu.Lock()
	soons, pauses = f.soons-soons, f.pauses-pauses
	streaming := f.streaming
	f.mu.Unlock()
	if !streaming {
		t.Skip("the stream ended before its frames were counted (a loaded machine): nothing measured")
	}
	if soons > pauses {
		t.Fatalf("%d frames drawn at once during the stream, %d pauses: the stream's frames should wait for the tick", soons, pauses)
	}
}

// TestResizeDuringAStreamIsDrawn: a resize ends a stream as a key does, so
// its View is drawn at once, at the new size.
func TestResizeDuringAStreamIsDrawn(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep, f.streamFrame = time.Hour, time.Hour
	p, out := pacedChat(t, f)
	eventually(t, "the chat drawn", func() bool { return out.contains("bob") })
	stop := make(chan struct{})
	next := streamFrom(p, 1000, stop)
	defer func() { close(stop); <-next }()
	eventually(t, "Views withheld", func() bool { w, _ := f.viewCounts(); return w > 0 })
	p.Send(tea.WindowSizeMsg{Width: 60, Height: 6})
	eventually(t, "the stream ended by the resize", func() bool { _, streaming, _ := f.pacerState(); return !streaming })
}
