package tui

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// pacedModel shows one line of text, set by a pacedText message; its View
// tells the pacer, as Model.View does.
type pacedModel struct {
	text  string
	pacer *FramePacer
}

type pacedText string

func (m pacedModel) Init() tea.Cmd { return nil }

func (m pacedModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if t, ok := msg.(pacedText); ok {
		m.text = string(t)
	}
	return m, nil
}

func (m pacedModel) View() tea.View {
	m.pacer.viewed()
	return tea.NewView(m.text)
}

// lockedBuffer is the program's terminal: the renderer writes from its own
// goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Contains(b.buf.String(), s)
}

// eventually polls cond until it holds or a generous deadline passes: what
// is checked is that it happens, not how fast.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runPaced runs a real Bubble Tea program with a pacer attached, writing to
// a buffer, until the test ends.
func runPaced(t *testing.T, f *FramePacer) (*tea.Program, *lockedBuffer) {
	t.Helper()
	return runPacedModel(t, f, pacedModel{text: "frame zero", pacer: f})
}

// runPacedModel is runPaced with a model of the test's.
func runPacedModel(t *testing.T, f *FramePacer, m tea.Model) (*tea.Program, *lockedBuffer) {
	t.Helper()
	return runPacedModelSized(t, f, m, 40, 5)
}

// runPacedModelSized is runPacedModel in a terminal of w×h.
func runPacedModelSized(t *testing.T, f *FramePacer, m tea.Model, w, h int) (*tea.Program, *lockedBuffer) {
	t.Helper()
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(nil),
		tea.WithOutput(out), tea.WithoutSignals(), tea.WithWindowSize(w, h), tea.WithFPS(30))
	if err := f.Attach(p); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run()
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return p, out
}

func (f *FramePacer) isAsleep() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asleep
}

// TestPacerFindsTheTicker: the pacer reaches the renderer's ticker on the
// Bubble Tea this module builds with. A Bubble Tea that renamed the field
// fails here, not silently in the idle TUI's CPU.
func TestPacerFindsTheTicker(t *testing.T) {
	f := NewFramePacer(30)
	_, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticker == nil {
		t.Fatal("the pacer has no ticker after the first View")
	}
}

// TestIdleRendererStopsTicking: once Views stop, the renderer's ticker
// stops firing at the frame rate (it ticked 30 times a second for as long as
// the program ran), and a View after that wakes it, so the new frame is
// drawn.
func TestIdleRendererStopsTicking(t *testing.T) {
	f := NewFramePacer(30)
	f.sleep = time.Hour // nothing but a View may tick it here
	p, out := runPaced(t, f)
	eventually(t, "the first frame drawn", func() bool { return out.contains("frame zero") })
	eventually(t, "the pacer asleep", f.isAsleep)

	// The renderer's own goroutine reads the ticker too: whatever either
	// receives is a tick that should not have come.
	f.mu.Lock()
	tk := f.ticker
	f.mu.Unlock()
	select {
	case <-tk.C:
		t.Fatal("the renderer's ticker fired while idle")
	case <-time.After(300 * time.Millisecond): // 9 frames at 30 a second
	}
	if out.contains("woken up") {
		t.Fatal("drawn before it was sent")
	}

	p.Send(pacedText("woken up"))
	eventually(t, "the frame after the idle drawn", func() bool { return out.contains("woken up") })
	eventually(t, "the pacer asleep again", f.isAsleep)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sleeps < 2 {
		t.Fatalf("slowed %d times, want at least 2 (once per idle)", f.sleeps)
	}
}

// TestViewTellsThePacer: the TUI's View is what keeps the renderer awake.
func TestViewTellsThePacer(t *testing.T) {
	f := NewFramePacer(30)
	tk := time.NewTicker(time.Hour)
	defer tk.Stop()
	f.field = &tk
	h := newHarnessWith(t, newFakeBackend("alice", fixtureNow), 80, 24, func(o *Options) { o.Pacer = f })
	h.m.View()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.views == 0 || f.check == nil {
		t.Fatalf("after Views: views %d, idle check armed %v; want some and armed", f.views, f.check != nil)
	}
	f.check.Stop()
}
