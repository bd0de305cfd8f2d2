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

// An outage is two log lines whatever the traffic: one when the circuit opens
// (why, and the last error), one when it closes (for how long, and how many
// calls failed or were refused in between). Calls log nothing themselves.
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
	for _, want := range []string{"level=WARN", "testsvc is failing", `why="3 calls in a row failed"`, `last_error="connection refused"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("open line lacks %s: %s", want, lines[0])
		}
	}
	for _, want := range []string{"level=INFO", "testsvc answers again", "failed_calls=2", "out_for="} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("close line lacks %s: %s", want, lines[1])
		}
	}
	_, after, _ := strings.Cut(lines[1], "refused_calls=")
	if n, err := strconv.Atoi(strings.Fields(after + " ")[0]); err != nil || n < refused {
		t.Errorf("close line should count at least the %d refused calls: %s", refused, lines[1])
	}
}
