package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
)

// A startTrace is a timeline of the TUI's start, written to the file named
// by CHAT_STARTTRACE: main's entry, each step of runTUI, the first Bubble Tea
// messages and Views, and every write to the terminal, each with its wall
// clock (Unix µs, comparable with the clock of whatever started the process),
// the time since main, the CPU the process has used so far (all its
// threads, the runtime's and package initialisers' included), which a
// loaded machine changes less than the wall clock, and its minor page
// faults so far (each first touch of a page of the binary, the heap or a
// table: on a virtual machine a fault can cost tens of µs, and the start
// takes hundreds of them; a page populated ahead by internal/prefault counts
// here too, though it takes no trap: scripts/tui-start-perf.sh counts the
// traps). It is how the start-up is taken apart from
// inside (docs/tui.md "Time to a painted inbox"); scripts/tui-start.sh sets
// it. It stops after traceSpan, so a long session's file stays small.
type startTrace struct {
	mu   sync.Mutex
	f    *os.File
	t0   time.Time
	buf  []byte
	done bool
}

// traceSpan is how long after main a startTrace records.
const traceSpan = 3 * time.Second

// openStartTrace opens CHAT_STARTTRACE for appending; nil (which records
// nothing) when it is unset or cannot be opened, so a trace never stops the
// program.
func openStartTrace(getenv func(string) string, t0 time.Time) *startTrace {
	path := getenv("CHAT_STARTTRACE")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chat: CHAT_STARTTRACE:", err)
		return nil
	}
	t := &startTrace{f: f, t0: t0}
	t.mark("main")
	return t
}

// mark records one step. Each line is written at once: a trace is for
// finding where the time goes, and a crash must not lose it.
func (t *startTrace) mark(what string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	if now.Sub(t.t0) > traceSpan {
		t.done = true
		t.f.Close()
		return
	}
	b := t.buf[:0]
	b = strconv.AppendInt(b, now.UnixMicro(), 10)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, float64(now.Sub(t.t0).Microseconds())/1000, 'f', 3, 64)
	b = append(b, " ms "...)
	cpu, faults := processUsage()
	b = strconv.AppendFloat(b, float64(cpu.Microseconds())/1000, 'f', 3, 64)
	b = append(b, " cpu-ms "...)
	b = strconv.AppendInt(b, faults, 10)
	b = append(b, " faults "...)
	b = append(b, what...)
	b = append(b, '\n')
	t.buf = b
	_, _ = t.f.Write(b)
}

func (t *startTrace) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		t.done = true
		t.f.Close()
	}
}

// processUsage is the user and system time the process has used and its
// minor page faults.
func processUsage() (cpu time.Duration, minorFaults int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}

type startTraceKey struct{}

// withStartTrace carries t to runTUI, as net/http/httptrace carries its
// hooks: only a traced start pays for it.
func withStartTrace(ctx context.Context, t *startTrace) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, startTraceKey{}, t)
}

func startTraceFrom(ctx context.Context) *startTrace {
	t, _ := ctx.Value(startTraceKey{}).(*startTrace)
	return t
}

// tracedModel marks Init, each message by its type and each View.
type tracedModel struct {
	tea.Model
	t *startTrace
}

func (m tracedModel) Init() tea.Cmd {
	m.t.mark("model Init")
	return m.Model.Init()
}

func (m tracedModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.t.mark(fmt.Sprintf("Update %T", msg))
	next, cmd := m.Model.Update(msg)
	return tracedModel{Model: next, t: m.t}, cmd
}

func (m tracedModel) View() tea.View {
	v := m.Model.View()
	m.t.mark(fmt.Sprintf("View %d bytes", len(v.Content)))
	return v
}

// tracedOutput marks every write to the terminal with its size and start.
type tracedOutput struct {
	*os.File
	t *startTrace
}

func (o tracedOutput) Write(p []byte) (int, error) {
	n, err := o.File.Write(p)
	head := p[:min(len(p), 40)]
	o.t.mark(fmt.Sprintf("write %d bytes %q", n, head))
	return n, err
}
