package dynamo_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
)

// proxy is testenv.Proxy in front of the test endpoint, under the names
// these tests use: DynamoDB unreachable (stop), back (start), hung (Hang).
type proxy struct{ *testenv.Proxy }

func newProxy(t *testing.T, endpoint string) proxy { return proxy{testenv.NewProxy(t, endpoint)} }

func (p proxy) url() string { return p.URL() }
func (p proxy) start()      { p.Start() }
func (p proxy) stop()       { p.Stop() }

// TestEndpointDown: with DynamoDB unreachable every call fails fast with
// ErrUnavailable, the breaker opens and then refuses at once, and the store
// recovers when the endpoint returns.
func TestEndpointDown(t *testing.T) {
	p := newProxy(t, endpoint(t))
	reg := prometheus.NewRegistry()
	s := open(t, dynamo.Options{Endpoint: p.url(), Registerer: reg,
		Breaker: dynamo.BreakerOptions{OpenFor: 300 * time.Millisecond, Probes: 1}})
	ctx := context.Background()
	putToken(t, s)

	p.stop()
	var slowest time.Duration
	for i := 0; s.BreakerState() != gobreaker.StateOpen; i++ {
		if i == 20 {
			t.Fatal("breaker still closed after 20 failed calls")
		}
		start := time.Now()
		_, err := s.GetToken(ctx, "h")
		slowest = max(slowest, time.Since(start))
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Fatalf("GetToken with the endpoint down: %v, want ErrUnavailable", err)
		}
	}
	t.Logf("slowest call with the endpoint down: %v", slowest)
	if slowest > time.Second {
		t.Errorf("a call with the endpoint down took %v", slowest)
	}
	if g := gauge(t, reg); g != 2 {
		t.Errorf("breaker gauge %v while open, want 2", g)
	}
	start := time.Now()
	if _, err := s.GetUser(ctx, "ann"); !errors.Is(err, gobreaker.ErrOpenState) {
		t.Fatalf("GetUser with the circuit open: %v", err)
	}
	if d := time.Since(start); d > 5*time.Millisecond {
		t.Errorf("refusal with the circuit open took %v", d)
	}

	p.start()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tok, err := s.GetToken(ctx, "h")
		if err == nil {
			if tok.UserID != "ann" {
				t.Fatalf("token %+v", tok)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 5s after the endpoint returned: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := s.BreakerState(); st != gobreaker.StateClosed {
		t.Errorf("breaker %v after recovery", st)
	}
	if g := gauge(t, reg); g != 0 {
		t.Errorf("breaker gauge %v after recovery, want 0", g)
	}
}

// putToken stores token "h" of ann, trying again while moto is slower than the
// fail-fast deadline (a loaded machine).
func putToken(t *testing.T, s *dynamo.Store) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, func() bool {
		return s.PutToken(context.Background(), server.Token{Hash: "h", UserID: "ann", ExpiresAt: time.Now().Add(time.Hour)}) == nil
	})
}

// TestEndpointHung: DynamoDB takes requests and never answers (not down: the
// connection stays open). With the default deadline each call gives up well
// under a second, a run of consecutive timeouts opens the breaker even at the
// lowest traffic (one call at a time), and the store recovers when answers come
// back.
func TestEndpointHung(t *testing.T) {
	p := newProxy(t, endpoint(t))
	s := open(t, dynamo.Options{Endpoint: p.url(), Breaker: dynamo.BreakerOptions{OpenFor: 300 * time.Millisecond, Probes: 1}})
	ctx := context.Background()
	putToken(t, s)

	p.Hang(true)
	var slowest time.Duration
	calls := 0
	for s.BreakerState() != gobreaker.StateOpen {
		if calls == 10 {
			t.Fatal("breaker still closed after 10 timed-out calls")
		}
		calls++
		start := time.Now()
		_, err := s.GetToken(ctx, "h")
		slowest = max(slowest, time.Since(start))
		if !errors.Is(err, dynamo.ErrUnavailable) || !errors.Is(err, server.ErrUnavailable) {
			t.Fatalf("GetToken with DynamoDB hung: %v, want ErrUnavailable", err)
		}
		if errors.Is(err, server.ErrNotApplied) {
			t.Fatalf("a timed-out call says nothing was written: %v", err)
		}
	}
	t.Logf("breaker open after %d calls; slowest %v", calls, slowest)
	if slowest > dynamo.DefaultCallTimeout+300*time.Millisecond {
		t.Errorf("a call to a hung DynamoDB took %v; the deadline is %v", slowest, dynamo.DefaultCallTimeout)
	}
	start := time.Now()
	if _, err := s.GetUser(ctx, "ann"); !errors.Is(err, gobreaker.ErrOpenState) || !errors.Is(err, server.ErrNotApplied) {
		t.Fatalf("GetUser with the circuit open: %v, want a refusal that says nothing was written", err)
	}
	if d := time.Since(start); d > 5*time.Millisecond {
		t.Errorf("refusal with the circuit open took %v", d)
	}

	p.Hang(false)
	testenv.WaitFor(t, 5*time.Second, func() bool {
		tok, err := s.GetToken(ctx, "h")
		return err == nil && tok.UserID == "ann"
	})
}

// TestDomainErrorsDoNotTrip: refusals on the request's merits (conditions,
// missing items) are answers from a healthy DynamoDB.
func TestDomainErrorsDoNotTrip(t *testing.T) {
	s := open(t, dynamo.Options{Breaker: dynamo.BreakerOptions{ConsecutiveFailures: 2, MinRequests: 2}})
	ctx := context.Background()
	for range 10 {
		if _, err := s.GetUser(ctx, "nobody"); !errors.Is(err, server.ErrNotFound) {
			t.Fatal(err)
		}
		if err := s.AppendMessage(ctx, msg("g:none", 1, "ann"), nil); !errors.Is(err, server.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if st := s.BreakerState(); st != gobreaker.StateClosed {
		t.Fatalf("breaker %v after domain errors", st)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "chat_circuit_breaker_state" {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetValue() == "dynamodb" {
						return m.GetGauge().GetValue()
					}
				}
			}
		}
	}
	t.Fatal("no chat_circuit_breaker_state{service=dynamodb}")
	return -1
}

// A DynamoDB that freezes briefly, at low traffic: one call times out, too few
// to open the circuit, and the log still says so once, and once more when a
// call is answered again. (Only the circuit's opening was logged before, so a
// freeze of about 7 s on a quiet node left no line.)
func TestShortFreezeLogged(t *testing.T) {
	p := newProxy(t, endpoint(t))
	var logs testenv.LogBuffer
	s := open(t, dynamo.Options{Endpoint: p.url(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	putToken(t, s)

	p.Hang(true)
	if _, err := s.GetToken(ctx, "h"); !errors.Is(err, server.ErrUnavailable) {
		t.Fatalf("GetToken with DynamoDB frozen: %v, want ErrUnavailable", err)
	}
	if s.BreakerState() != gobreaker.StateClosed {
		t.Fatalf("breaker %v after one timeout: this test is about a freeze too short to open it", s.BreakerState())
	}
	// The breaker's verdict on a timeout waits for the grace in which an
	// answer to another call would excuse it (slowcalls.go); none comes.
	testenv.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "dynamodb is failing") })
	if n := strings.Count(logs.String(), "dynamodb is failing"); n != 1 {
		t.Fatalf("%d failing lines after a timed-out call, want 1:\n%s", n, logs.String())
	}
	p.Hang(false)
	testenv.WaitFor(t, 5*time.Second, func() bool {
		tok, err := s.GetToken(ctx, "h")
		return err == nil && tok.UserID == "ann"
	})
	if n := strings.Count(logs.String(), "dynamodb answers again"); n != 1 {
		t.Fatalf("%d answering lines once DynamoDB answered, want 1:\n%s", n, logs.String())
	}
}
