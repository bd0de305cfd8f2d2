package breaker_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/breaker"
)

var errDown = errors.New("connection refused")

func call(b *breaker.Breaker, err error) error {
	done, aerr := b.Allow()
	if aerr != nil {
		return aerr
	}
	done(err)
	return err
}

// An outage is two log lines whatever the traffic: one at its first failure
// (the error), one when the service answers with the circuit closed (for how
// long, and how many calls failed or were refused in between). Calls log
// nothing themselves.
func TestOutageLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	b, err := breaker.New("testsvc", breaker.Options{OpenFor: 50 * time.Millisecond, Probes: 1, ConsecutiveFailures: 3}, breaker.Options{}, nil, log,
		func(err error) bool { return err != nil }, func(error) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	call(b, nil)
	for range 3 {
		call(b, errDown)
	}
	if b.State() != breaker.State(2) { // open
		t.Fatalf("state %v after 3 failures in a row", b.State())
	}
	refused := 0
	for range 100 {
		if errors.Is(call(b, nil), breaker.ErrOpen) {
			refused++
		}
	}
	// Half-open probes fail twice: the same outage, no new line.
	for range 2 {
		testenv.WaitFor(t, 2*time.Second, func() bool { return call(b, errDown) == errDown })
	}
	testenv.WaitFor(t, 2*time.Second, func() bool { return call(b, nil) == nil })

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two lines for one outage, got %d:\n%s", len(lines), logs.String())
	}
	for _, want := range []string{"level=WARN", "testsvc is failing", `last_error="connection refused"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("open line lacks %s: %s", want, lines[0])
		}
	}
	for _, want := range []string{"level=INFO", "testsvc answers again", "failed_calls=5", "out_for="} { // 3, then 2 probes
		if !strings.Contains(lines[1], want) {
			t.Errorf("close line lacks %s: %s", want, lines[1])
		}
	}
	_, after, _ := strings.Cut(lines[1], "refused_calls=")
	if n, err := strconv.Atoi(strings.Fields(after + " ")[0]); err != nil || n < refused {
		t.Errorf("close line should count at least the %d refused calls: %s", refused, lines[1])
	}
}

// clock is a settable time for the outage lines.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newLogged(t *testing.T, c *clock) (*breaker.Breaker, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	b, err := breaker.New("testsvc", breaker.Options{Now: c.now}, breaker.Options{}, nil, slog.New(slog.NewTextHandler(&logs, nil)),
		func(err error) bool { return err != nil }, func(error) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	return b, &logs
}

func logLines(logs *bytes.Buffer) []string {
	if logs.Len() == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(logs.String()), "\n")
}

// A node with little traffic (a heartbeat every 5 s) never fails five calls in
// a row within the window, so its circuit stays closed through the outage; its
// log still gets the outage's two lines: at the first failure, and at the
// first answer after it. (When only the circuit's opening was logged, a 45 s
// Redis outage left two nodes of three silent.)
func TestOutageLoggedAtLowTraffic(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	b, logs := newLogged(t, c)
	call(b, nil)
	for range 3 {
		c.advance(5 * time.Second)
		if err := call(b, errDown); err != errDown {
			t.Fatalf("call: %v", err)
		}
	}
	if b.State() != breaker.State(0) {
		t.Fatalf("circuit %v after three failures: want it closed (this test is about the lines)", b.State())
	}
	lines := logLines(logs)
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "testsvc is failing") ||
		!strings.Contains(lines[0], `last_error="connection refused"`) {
		t.Fatalf("want one WARN line once calls fail, got:\n%s", logs.String())
	}
	c.advance(5 * time.Second)
	call(b, nil)
	call(b, nil)
	lines = logLines(logs)
	if len(lines) != 2 || !strings.Contains(lines[1], "level=INFO") || !strings.Contains(lines[1], "testsvc answers again") ||
		!strings.Contains(lines[1], "failed_calls=3") || !strings.Contains(lines[1], "out_for=15s") {
		t.Fatalf("want one INFO line at the first answer, got:\n%s", logs.String())
	}
}

// A failure within a minute of an outage's end is written only once calls have
// failed for a second: a service that fails now and then under traffic would
// otherwise write two lines per failure.
func TestFailureSoonAfterAnOutageLoggedOnceItLasts(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	b, logs := newLogged(t, c)
	call(b, errDown)
	c.advance(time.Second)
	call(b, nil)
	if n := len(logLines(logs)); n != 2 {
		t.Fatalf("first outage: %d lines, want 2:\n%s", n, logs.String())
	}
	for range 3 { // one failure among answers, three times
		c.advance(10 * time.Second)
		call(b, errDown)
		c.advance(10 * time.Millisecond)
		call(b, nil)
	}
	if n := len(logLines(logs)); n != 2 {
		t.Fatalf("lone failures within a minute of the outage wrote lines:\n%s", logs.String())
	}
	c.advance(10 * time.Second)
	call(b, errDown)
	c.advance(500 * time.Millisecond)
	call(b, errDown)
	if n := len(logLines(logs)); n != 2 {
		t.Fatalf("a failure half a second old was written:\n%s", logs.String())
	}
	c.advance(600 * time.Millisecond)
	call(b, errDown)
	c.advance(time.Second)
	call(b, nil)
	lines := logLines(logs)
	if len(lines) != 4 || !strings.Contains(lines[2], "testsvc is failing") || !strings.Contains(lines[3], "failed_calls=3") {
		t.Fatalf("want the lasting outage's two lines, got:\n%s", logs.String())
	}
	// A minute after the last outage, the first failure is written at once.
	c.advance(2 * time.Minute)
	call(b, errDown)
	if n := len(logLines(logs)); n != 5 {
		t.Fatalf("a failure two minutes after the last outage: %d lines, want 5:\n%s", n, logs.String())
	}
}
