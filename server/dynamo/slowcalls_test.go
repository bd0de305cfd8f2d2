package dynamo_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/dynamo"
)

// slowProxy forwards to the test endpoint and holds back the answer to any
// request whose bytes contain marker for delay: some calls slow while the
// rest are answered at once, as when one node's calls queue behind others.
// Go's HTTP client sends one request at a time per connection, so the answer
// after a marked request is that request's.
func slowProxy(t *testing.T, target, marker string, delay time.Duration) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				up, err := net.Dial("tcp", u.Host)
				if err != nil {
					return
				}
				defer up.Close()
				var slow atomic.Bool
				go func() {
					buf := make([]byte, 64<<10)
					for {
						n, err := c.Read(buf)
						if n > 0 {
							slow.Store(bytes.Contains(buf[:n], []byte(marker)))
							if _, werr := up.Write(buf[:n]); werr != nil {
								return
							}
						}
						if err != nil {
							up.Close()
							return
						}
					}
				}()
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					if n > 0 {
						if slow.Swap(false) {
							time.Sleep(delay)
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						if !errors.Is(err, io.EOF) {
							return
						}
						return
					}
				}
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// TestSlowCallsWhileAnsweredDoNotTrip: calls that run past the call timeout
// while DynamoDB answers other calls fail, and are not counted against
// DynamoDB: the circuit stays closed and nothing is logged. (Counted, 20 such
// timeouts opened it — five in a row, or 1% of the window — and every call
// was refused for OpenFor with no fault anywhere; moto under load did so.)
func TestSlowCallsWhileAnsweredDoNotTrip(t *testing.T) {
	ep := slowProxy(t, endpoint(t), "slowtoken", 2*time.Second)
	var logs testenv.LogBuffer
	s := open(t, dynamo.Options{Endpoint: ep, CallTimeout: 300 * time.Millisecond, MaxAttempts: 1,
		Breaker: dynamo.BreakerOptions{MinRequests: 20}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	putToken(t, s)

	stop := make(chan struct{})
	var answered atomic.Int64
	var fast sync.WaitGroup
	fast.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.GetToken(ctx, "h"); err == nil {
				answered.Add(1)
			}
		}
	})
	testenv.WaitFor(t, 10*time.Second, func() bool { return answered.Load() > 0 })
	var slow sync.WaitGroup
	for range 20 {
		slow.Go(func() {
			if _, err := s.GetToken(ctx, "slowtoken"); !errors.Is(err, server.ErrUnavailable) {
				t.Errorf("a call past the timeout: %v, want ErrUnavailable", err)
			}
		})
	}
	slow.Wait()
	close(stop)
	fast.Wait()
	t.Logf("answered meanwhile: %d", answered.Load())
	if st := s.BreakerState(); st != gobreaker.StateClosed {
		t.Errorf("breaker %v after slow calls while DynamoDB answered others", st)
	}
	if out := logs.String(); out != "" {
		t.Errorf("logged: %s", out)
	}
}

// Creating the tables is not bounded by the call timeout: a DynamoDB (or a
// loaded test server) that takes longer than a call to create a table still
// gets them made at start. Each attempt was bounded by it, and a node with
// --create-tables failed to start on moto under load.
func TestCreateTablesOutlastsTheCallTimeout(t *testing.T) {
	ep := slowProxy(t, endpoint(t), "CreateTable", 400*time.Millisecond)
	s, err := dynamo.Open(context.Background(), dynamo.Options{Endpoint: ep, Region: "t" + prefix()[1:9], TablePrefix: prefix(),
		AccessKeyID: "test", SecretAccessKey: "test", SkipResponseChecksum: true, CallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Cleanup(func() { _ = s.DeleteTables(context.Background()) })
	if err := s.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables with each creation slower than the call timeout: %v", err)
	}
}

// A stall longer than the call timeout, that ends: every call in flight
// times out with nothing answered meanwhile, and DynamoDB answers the next
// calls within the grace. Not an outage — moto stalls so for a second or
// more while it copies its tables under load — so the circuit stays closed
// and nothing is logged; the calls themselves still failed.
func TestStallShorterThanTheGraceDoesNotTrip(t *testing.T) {
	p := newProxy(t, endpoint(t))
	var logs testenv.LogBuffer
	const timeout = 300 * time.Millisecond
	s := open(t, dynamo.Options{Endpoint: p.url(), CallTimeout: timeout, MaxAttempts: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	putToken(t, s)

	p.Hang(true)
	var stalled sync.WaitGroup
	for range 8 {
		stalled.Go(func() {
			if _, err := s.GetToken(ctx, "h"); !errors.Is(err, server.ErrUnavailable) {
				t.Errorf("a call in the stall: %v, want ErrUnavailable", err)
			}
		})
	}
	stalled.Wait()
	p.Hang(false)
	if _, err := s.GetToken(ctx, "h"); err != nil {
		t.Fatalf("the call after the stall: %v", err)
	}
	time.Sleep(3 * timeout) // past the grace: every verdict is in
	if st := s.BreakerState(); st != gobreaker.StateClosed {
		t.Errorf("breaker %v after a stall that ended within the grace", st)
	}
	if out := logs.String(); out != "" {
		t.Errorf("logged: %s", out)
	}
}
