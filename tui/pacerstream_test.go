package tui

import (
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// pacerState is what the pacer has set the renderer's ticker to.
func (f *FramePacer) pacerState() (period time.Duration, streaming bool, streams int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.period, f.streaming, f.streams
}

// TestStreamSlowsFrames: while Views keep coming faster than streamViews a
// window (a busy chat's messages), the renderer ticks at streamFrame, not at
// the full frame rate; when they stop the ticker sleeps, and a View after the
// quiet spell (a lone message) is drawn at the full rate again.
func TestStreamSlowsFrames(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour // nothing but a View may tick it here
	if f.streamFrame <= f.frame {
		t.Fatalf("streamFrame %v is not slower than the frame %v", f.streamFrame, f.frame)
	}
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })

	// A View every 5 ms, until the pacer calls it a stream (a window of
	// 250 ms sees dozens, against streamViews 8, however loaded the machine).
	stop := make(chan struct{})
	sent := make(chan int)
	go func() {
		i := 0
		defer func() { sent <- i }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				i++
				p.Send(pacedText("message " + strconv.Itoa(i)))
			}
		}
	}()
	eventually(t, "the ticker at streamFrame", func() bool {
		period, streaming, _ := f.pacerState()
		return streaming && period == f.streamFrame
	})
	close(stop)
	<-sent
	p.Send(pacedText("the stream is over"))
	eventually(t, "the end of the stream drawn", func() bool { return out.contains("the stream is over") })
	eventually(t, "the pacer asleep after the stream", f.isAsleep)
	if period, streaming, _ := f.pacerState(); streaming || period != f.sleep {
		t.Fatalf("after the stream the ticker is at %v (streaming %v), want asleep at %v", period, streaming, f.sleep)
	}

	p.Send(pacedText("a lone message"))
	eventually(t, "the lone message drawn", func() bool { return out.contains("a lone message") })
	if period, streaming, _ := f.pacerState(); !f.isAsleep() && (streaming || period != f.frame) {
		t.Fatalf("after a quiet spell a View set the ticker to %v (streaming %v), want the full frame %v", period, streaming, f.frame)
	}
}

// TestTypingKeepsTheFullFrameRate: Views a few to a window (keys typed, a
// message now and then) keep the renderer at the full frame rate.
func TestTypingKeepsTheFullFrameRate(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	eventually(t, "the pacer asleep after the start", f.isAsleep) // the start's Views come close together
	_, _, started := f.pacerState()
	// A key every 60 ms: four or five a window of 250 ms, against 8.
	for i := range 25 {
		p.Send(pacedText("key " + strconv.Itoa(i)))
		time.Sleep(60 * time.Millisecond)
		// The full frame, or asleep if a loaded machine drew the key and went
		// quiet before this look: never the stream's slower frame.
		if period, streaming, _ := f.pacerState(); streaming || period == f.streamFrame {
			t.Fatalf("after key %d the ticker is at %v (streaming %v), want the full frame %v", i, period, streaming, f.frame)
		}
	}
	if _, _, streams := f.pacerState(); streams != started {
		t.Fatalf("typing made %d streams, want none", streams-started)
	}
}

// keyedModel is pacedModel for keys: every key is typed into the text and,
// as Model.Update does, tells the pacer.
type keyedModel struct{ pacedModel }

func (m keyedModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		m.pacer.keyed()
		m.text += k.Text
	}
	return m, nil
}

// TestHeldKeysKeepTheFullFrameRate: keys as fast as a held key repeats or
// a paste without bracketed paste arrives (hundreds a second, as many Views
// as a stream of messages) never slow the renderer to the stream's frame,
// and a key during a stream sets the full rate at once.
func TestHeldKeysKeepTheFullFrameRate(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour
	p, out := runPacedModel(t, f, keyedModel{pacedModel{text: "frame zero", pacer: f}})
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	eventually(t, "the pacer asleep after the start", f.isAsleep)
	_, _, started := f.pacerState()
	// A key every 2 ms for 1.5 s: six windows of 250 ms, each with far more
	// Views than streamViews.
	for i := 0; i < 750; i++ {
		p.Send(tea.KeyPressMsg{Code: 'x', Text: "x"})
		time.Sleep(2 * time.Millisecond)
		if period, streaming, _ := f.pacerState(); streaming || period == f.streamFrame {
			t.Fatalf("after key %d the ticker is at %v (streaming %v), want the full frame %v", i, period, streaming, f.frame)
		}
	}
	if _, _, streams := f.pacerState(); streams != started {
		t.Fatalf("keys made %d streams, want none", streams-started)
	}

	// A stream of messages, then a key: the full rate from that key on.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				p.Send(pacedText("message " + strconv.Itoa(i)))
			}
		}
	}()
	defer func() { close(stop); <-done }()
	eventually(t, "the ticker at streamFrame", func() bool {
		period, streaming, _ := f.pacerState()
		return streaming && period == f.streamFrame
	})
	f.keyed()
	if period, streaming, _ := f.pacerState(); streaming || period != f.frame {
		t.Fatalf("a key during a stream left the ticker at %v (streaming %v), want the full frame %v", period, streaming, f.frame)
	}
}

// TestKeysTellThePacer: the TUI's Update tells the pacer of every key, so
// typing is never taken for a stream.
func TestKeysTellThePacer(t *testing.T) {
	f := NewFramePacer(30)
	tk := time.NewTicker(time.Hour)
	defer tk.Stop()
	f.field = &tk
	h := newHarnessWith(t, newFakeBackend("alice", fixtureNow), 80, 24, func(o *Options) { o.Pacer = f })
	h.key("j", "k")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys < 2 {
		t.Fatalf("after 2 keys the pacer counted %d", f.keys)
	}
	if f.check != nil {
		f.check.Stop()
	}
}
